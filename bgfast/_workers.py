"""Ordered parallel maps over blocks of work, for batch analysis.

:func:`ordered_map` applies ``fn(block, args)`` to every block and yields
the results in input order, with a bounded number of blocks in flight
(bounded memory), on one of three backends:

- **here**, with ``jobs=1``;
- **local**: this process and ``jobs - 1`` forked workers.  This process
  alone talks to the workers, through a pipe each way, from its own thread
  (the pool runs no threads, so nothing waits for this process's GIL while
  it computes).  Each worker has up to :data:`DEPTH` blocks queued; this
  process hands out the blocks in order, and works on the next block itself
  whenever the first unwritten one is still being worked on.  The work
  therefore balances itself, whatever this process spends besides (writing
  the rows, reading the input).  Where processes cannot be forked, a
  :class:`concurrent.futures.ProcessPoolExecutor` does the work instead;
- **ray**: Ray tasks (``max_retries=3``), ``jobs`` of them in flight
  (None: twice the cluster's CPUs).

Forked workers take their blocks and give their results through shared
memory, one slot per block in flight (a pipe carries a few hundred MB/s;
the pipes carry only small messages).  Where ``fn`` returns ``(bytes,
...)``, the bytes of a worker's result arrive as a memoryview that is valid
until the next result is asked for.  ``put(block, buffer)`` (with
``get(ref, buffer)`` in the worker) may pass a block in a form of its own:
it writes the block into ``buffer`` and returns a small picklable
reference, or None to have the block pickled.

Results are the same whatever the backend and the number of workers: every
block is computed by the same function on the same input.

Every worker ends with its map: when the map's iterator is used up,
closed, or dropped (an error, a ``break``), its workers are stopped and
reaped before control returns.  A map inside a forked worker (a rollout
asked for by a block of analysis, say) runs there, in that worker alone:
workers never fork workers of their own.
"""
from __future__ import annotations

import gc
import mmap
import multiprocessing
import os
import pickle
import select
import signal
import struct
import sys
from collections import deque
from typing import Callable, Iterable, Iterator

from .errors import WorkerError

__all__ = ["ordered_map", "WorkerError", "DEPTH", "OUT_BYTES", "IN_BYTES"]

#: Blocks queued at each worker (one being worked on, the rest waiting in
#: its pipe, so that it never waits for this process).
DEPTH = 2
#: Shared memory per block in flight: the rows a worker writes, and the
#: input lines it reads.
OUT_BYTES = 64 << 20
IN_BYTES = 16 << 20

_HEAD = struct.Struct("<q")

#: True in a forked worker: maps there run in the worker itself.
_IN_WORKER = False


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the
    system tells it): the default number of local workers."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # not on Linux
        return os.cpu_count() or 1


def ordered_map(fn: Callable, blocks: Iterable, args, jobs: int | None = 1, backend: str = "local",
                address: str | None = None, window: int | None = None,
                put: Callable | None = None, get: Callable | None = None,
                into: bool = False) -> Iterator:
    """``fn(block, args)`` for every block, in block order (see the module).
    With ``into``, ``fn(block, args, buffer)`` may write its bytes into the
    writable ``buffer`` and return a memoryview of it first (no copies)."""
    if backend == "ray":
        return _ray_map(fn, blocks, args, jobs, address)
    if _IN_WORKER and backend == "local":
        jobs = 1
    jobs = jobs or cores()
    window = window or max(2, 4 * jobs)
    if jobs <= 1:
        return _serial_map(fn, blocks, args) if into else (fn(b, args) for b in blocks)
    if "fork" not in multiprocessing.get_all_start_methods():
        return _executor_map(fn, blocks, args, jobs, window)
    return _fork_map(fn, blocks, args, jobs - 1, window, put, get, into)


#: Row buffers of finished serial maps, kept for the next (their pages
#: already mapped); each map takes its own, so maps may interleave.
_SPARE: list = []


def _serial_map(fn, blocks, args):
    """Here, into one buffer (each result is used before the next block),
    grown when a block's bytes did not fit."""
    import numpy as np

    buf = _SPARE.pop() if _SPARE else np.empty(1 << 16, dtype=np.uint8)   # written before read
    try:
        for block in blocks:
            out = fn(block, args, buf)
            data = out[0]
            if not (isinstance(data, memoryview) and data.obj is buf):
                buf = np.empty(len(data) + len(data) // 4, dtype=np.uint8)
            yield out
    finally:
        if len(_SPARE) < 2:
            _SPARE.append(buf)


def _windowed(submit, result, blocks, window):
    """``result(submit(block))`` for every block, in order, with at most
    ``window`` blocks submitted and not yet collected."""
    pending: deque = deque()
    for block in blocks:
        pending.append(submit(block))
        if len(pending) >= window:
            yield result(pending.popleft())
    while pending:
        yield result(pending.popleft())


def _ray_map(fn, blocks, args, jobs, address):
    """Ray tasks, ``jobs`` of them in flight (:func:`bgfast._ray.tasks_in_flight`)."""
    from ._ray import NodeTally, connect, tagged, task_error, tasks_in_flight

    ray = connect(address)
    window = tasks_in_flight(ray, jobs)
    remote = ray.remote(max_retries=3)(tagged)
    tally = NodeTally()

    def result(task):
        try:
            return tally.take(ray.get(task))
        except ray.exceptions.RayError as exc:
            raise task_error(exc) from None

    yield from _windowed(lambda block: remote.remote(fn, block, args), result, blocks, window)
    tally.report()


def _executor_map(fn, blocks, args, jobs, window):
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from _windowed(lambda block: pool.submit(fn, block, args),
                             lambda future: future.result(), blocks, window)


# ---------------------------------------------------------------------------
# forked workers
# ---------------------------------------------------------------------------

def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_exact(fd: int, n: int) -> bytes:
    parts = []
    while n:
        part = os.read(fd, min(n, 1 << 20))
        if not part:
            raise EOFError
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


def _send(fd: int, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, _HEAD.pack(len(data)) + data)


def _receive(fd: int):
    (size,) = _HEAD.unpack(_read_exact(fd, _HEAD.size))
    return pickle.loads(_read_exact(fd, size))


#: Messages up to this size go through the pipes; larger ones through the
#: block's shared slot, so that a pipe never holds more than a pipe buffer
#: (then neither side can block the other).
_INLINE = 16 << 10


def _serve(tasks: int, results: int, fn, args, outs, ins, get, into) -> None:
    """A worker's loop: ``(key, how, block, slot)`` in, ``(key, ok, how,
    value)`` out (:func:`_unwrap`), until the task pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)       # this process's Ctrl-C stops the run
    while True:
        try:
            key, how, block, slot = _receive(tasks)
        except EOFError:
            return
        try:
            if how == "ref":
                block = get(block, ins[slot])
            elif how == "pickle":
                block = pickle.loads(memoryview(ins[slot])[:block])
            out = fn(block, args, outs[slot]) if into else fn(block, args)
            reply = (key, True) + _wrap(out, outs[slot])
        except BaseException as exc:             # handed to this process, raised there
            reply = (key, False, "inline", exc)
        try:
            _send(results, reply)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            _send(results, (key, False, "inline",
                            WorkerError(f"a worker's result could not be sent back: {exc}")))


def _wrap(out, buf) -> tuple:
    """A result as ``(how, value)``: bytes first in the slot, a large result
    pickled into it, or the result itself."""
    if isinstance(out, tuple) and out and isinstance(out[0], (bytes, bytearray, memoryview)):
        data = out[0]
        if not (isinstance(data, memoryview) and data.obj is buf):   # not written there already
            if len(data) > OUT_BYTES:
                return "inline", out
            buf[:len(data)] = data
        return "bytes", (len(data),) + tuple(out[1:])
    data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
    if _INLINE < len(data) <= OUT_BYTES:
        buf[:len(data)] = data
        return "pickle", len(data)
    return "inline", out


def _unwrap(how: str, value, buf):
    if how == "bytes":
        return (memoryview(buf)[:value[0]],) + tuple(value[1:])
    if how == "pickle":
        return pickle.loads(memoryview(buf)[:value])
    return value


class _Worker:
    def __init__(self, pid: int, tasks: int, results: int):
        self.pid, self.tasks, self.results = pid, tasks, results
        self.queued = 0          # blocks handed to it, not yet back


class _Pool:
    """``count`` forked workers serving ``fn(block, args)``, and ``slots``
    shared buffers (rows out, lines in) for the blocks in flight."""

    def __init__(self, count: int, fn, args, slots: int, get, into: bool):
        # MAP_SHARED | MAP_ANONYMOUS: the workers forked below share them
        self.outs = [mmap.mmap(-1, OUT_BYTES) for _ in range(slots)]
        self.ins = [mmap.mmap(-1, IN_BYTES) for _ in range(slots)]
        self.workers: list[_Worker] = []
        for stream in (sys.stdout, sys.stderr):           # nothing buffered is written twice
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass
        try:
            for _ in range(count):
                self._fork(fn, args, get, into)
        except BaseException:
            self.close(kill=True)
            raise

    def _fork(self, fn, args, get, into) -> None:
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        pid = os.fork()
        if pid == 0:                                     # the worker: never returns
            global _IN_WORKER
            _IN_WORKER = True
            code = 0
            try:
                for w in self.workers:                   # the other workers' pipe ends
                    os.close(w.tasks)
                    os.close(w.results)
                os.close(task_w)
                os.close(result_r)
                _serve(task_r, result_w, fn, args, self.outs, self.ins, get, into)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(task_r)
        os.close(result_w)
        self.workers.append(_Worker(pid, task_w, result_r))

    def submit(self, worker: _Worker, key: int, block, slot: int, put) -> bool:
        """Hand ``block`` to ``worker`` through ``slot``; False (nothing
        sent) if it is too large for the slot."""
        ref = put(block, self.ins[slot]) if put is not None else None
        if ref is not None:
            message = (key, "ref", ref, slot)
        else:
            data = pickle.dumps(block, protocol=pickle.HIGHEST_PROTOCOL)
            if len(data) <= _INLINE:
                message = (key, "inline", block, slot)
            elif len(data) <= IN_BYTES:
                self.ins[slot][:len(data)] = data
                message = (key, "pickle", len(data), slot)
            else:
                return False
        _send(worker.tasks, message)
        worker.queued += 1
        return True

    def collect(self, timeout: float | None) -> list:
        """The replies ready within ``timeout`` seconds (None: wait for one),
        as ``(key, ok, how, value)``."""
        busy = {w.results: w for w in self.workers if w.queued}
        if not busy:
            return []
        ready, _, _ = select.select(list(busy), [], [], timeout)
        replies = []
        for fd in ready:
            worker = busy[fd]
            try:
                key, ok, how, value = _receive(fd)
            except EOFError:
                raise WorkerError(self._death(worker)) from None
            worker.queued -= 1
            replies.append((key, ok, how, value))
        return replies

    def _death(self, worker: _Worker) -> str:
        try:
            _, status = os.waitpid(worker.pid, 0)
        except ChildProcessError:
            status = None
        self.workers.remove(worker)
        os.close(worker.tasks)
        os.close(worker.results)
        if status is not None and os.WIFSIGNALED(status):
            how = f"was killed by signal {os.WTERMSIG(status)}"
        elif status is not None:
            how = f"exited with status {os.WEXITSTATUS(status)}"
        else:
            how = "ended"
        return f"worker process {worker.pid} {how} in the middle of the run"

    def close(self, kill: bool = False) -> None:
        for w in self.workers:
            if kill:
                try:
                    os.kill(w.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            os.close(w.tasks)                             # end of tasks: the worker returns
        for w in self.workers:
            try:
                os.waitpid(w.pid, 0)
            except ChildProcessError:
                pass
            os.close(w.results)
        self.workers.clear()
        for m in self.outs + self.ins:
            try:
                m.close()
            except BufferError:           # a view of the last rows is still held: unmapped with it
                pass


class _Block:
    """A block in flight: its input, the worker it went to (None: worked
    on here), its slot, and its result once done."""

    __slots__ = ("block", "worker", "slot", "done", "value")

    def __init__(self, block, worker, slot):
        self.block, self.worker, self.slot = block, worker, slot
        self.done = False
        self.value = None


def _fork_map(fn, blocks, args, count, window, put, get, into):
    # The objects alive now are frozen out of the collector meanwhile, so that
    # neither the workers nor this process keep walking (and copying) them.
    frozen = gc.get_freeze_count() == 0
    if frozen:
        gc.freeze()
    try:
        pool = _Pool(count, fn, args, window, get, into)
        clean = False
        try:
            yield from _schedule(pool, fn, iter(blocks), args, window, put, into)
            clean = True
        finally:
            pool.close(kill=not clean)
    finally:
        if frozen:
            gc.unfreeze()


def _schedule(pool: _Pool, fn, blocks: Iterator, args, window: int, put, into: bool):
    """Blocks ``head`` .. ``new - 1`` are in flight (at most ``window``):
    handed to a worker, or worked on here; each holds a slot (``into``: also
    those worked on here, which write their bytes there) until its result
    has been used."""
    pending: dict[int, _Block] = {}
    free = list(range(window - 1, -1, -1))
    head = new = 0            # the next block to yield; the next block to read
    exhausted = False
    held = None               # the slot of the result last yielded (valid until now)

    def read():
        nonlocal new, exhausted
        if exhausted or new - head >= window:
            return None
        try:
            block = next(blocks)
        except StopIteration:
            exhausted = True
            return None
        pending[new] = item = _Block(block, None, -1)
        new += 1
        return item

    def here(item):
        if into and free:
            item.slot = free.pop()
            item.value = fn(item.block, args, pool.outs[item.slot])
        else:
            item.value = fn(item.block, args)
        item.done = True

    def arrived(replies):
        for key, ok, how, value in replies:
            if not ok:
                raise value
            item = pending[key]
            item.value, item.done = _unwrap(how, value, pool.outs[item.slot]), True

    while True:
        if held is not None:
            free.append(held)
            held = None
        for worker in pool.workers:           # keep every worker's queue full, in block order
            while worker.queued < DEPTH and free:
                item = read()
                if item is None:
                    break
                slot = free.pop()
                if pool.submit(worker, new - 1, item.block, slot, put):
                    item.worker, item.slot = worker, slot
                else:                         # too large for a slot: worked on here
                    free.append(slot)
        arrived(pool.collect(0))
        item = pending.get(head) or read()
        if item is None:
            return
        if item.done:
            del pending[head]
            head += 1
            if item.slot >= 0:
                held = item.slot
            yield item.value
            continue
        if item.worker is None:               # the first unwritten block is this process's
            here(item)
            continue
        mine = next((b for b in pending.values() if b.worker is None and not b.done), None)
        if mine is None:
            mine = read()                     # the first one is being worked on: work on the next
        if mine is not None:
            here(mine)
            continue
        arrived(pool.collect(None))           # nothing left to do here: wait for a worker
