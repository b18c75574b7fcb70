"""Bear-off and race databases.

Two kinds of table, built by Cython kernels (:mod:`bgfast._bearoff`) and kept
in memory-mapped files:

* **one-sided** (race) tables: up to 15 checkers on P points (P = 6 by
  default, up to 13).  Per position: the distribution of the number of rolls
  to bear off every checker (play minimising the expected number of rolls)
  and of the number of rolls until the first checker is off (the gammon
  distribution; 0 rolls for a position that has already borne one off, i.e.
  has fewer than the table's C checkers, as in gnubg's files).  Built on it: mean and variance of rolls, the effective pip
  count, and race probabilities between two one-sided positions by
  convolution (the race evaluator for positions outside a two-sided table).
* **two-sided** tables: up to C checkers a side on 6 points, exact values for
  every pair of positions with the player on roll first: the cubeless equity
  (so the winning chances) and, optionally, the money-game cubeful equities
  with the cube centred, owned by the roller and owned by the opponent.

One-sided builds use all cores, two-sided builds one thread unless told
otherwise (``threads=2``): on a busy machine their per-shell thread
synchronisation costs more than it gains.

The API follows python-chess's syzygy module::

    with bgfast.bearoff.open("6x8.bgb") as table:
        result = table.probe(position)        # MissingTableError if outside
        result = table.get(position)          # None if outside

Probabilities are the project's five values for the player on roll: win,
win gammon, win backgammon, lose gammon, lose backgammon (cumulative, win
includes gammons); there are no backgammons in a bear-off.

File format (little-endian), see :data:`HEADER` and docs/formats.md::

    0   8s  magic  b"BGFBOFF\\0"
    8   u16 format version (1)
    10  u16 kind: 1 one-sided, 2 two-sided
    12  u16 points          14  u16 checkers
    16  u16 layout: 1 one-sided float32 windows, 2 int16 fixed point,
                    3 float32, 4 one-sided packed float32 windows
    18  u16 number of value tables  20  u16 window (one-sided)
    22  u16 flags: bit 0 = complete
    24  u64 positions per side (N)   32  f64 fixed-point scale
    40  u64 data offset (128)        48  u64 data size in bytes
    56  u64 shells solved (two-sided build checkpoint)
    64  u32 CRC-32 of the data       68  56 reserved zero bytes
    124 u32 CRC-32 of header bytes 0..123

One-sided data, layout 1 (windows): ``start_r u8[N]``, ``start_g u8[N]``,
zero padding to a multiple of 8, ``dist_r f32[N, W]``, ``dist_g f32[N, W]``,
rows in gnubg's position order (:func:`index`); ``dist_r[i, k]`` is the
probability that position i needs exactly ``start_r[i] + k`` rolls.
Layout 4 (packed, what bgfast writes for tables whose windows take at most
:data:`PACK_LIMIT` bytes): ``start_r u8[N]``, ``start_g u8[N]``,
``len_r u8[N]``, ``len_g u8[N]``, zero padding to a multiple of 8, then the
first ``len_r[i]`` values of every row of ``dist_r`` one after the other
(f32, rows in gnubg order), then those of ``dist_g``; the rest of each
window is zero.  The kernels read a packed table's rows where they lie in
the memory-mapped file; it is expanded into windows only when those are
asked for (``dist_r``, ``dist_g``).
Layout 5 is a one-sided build in progress (``FILE.partial``): the build
state arrays of ``_bearoff.ONE_SIDED_STATE`` in build order, each aligned
to 8 bytes, with "shells solved" = pip groups solved.

Two-sided data: the value tables one after the other, each ``N * N`` values,
column-major in *build order* (one-sided positions sorted by pip count,
stable in gnubg order): value (i, j) for roller i, opponent j at
``j * N + i``.  Table 0 is the cubeless equity; cubeful files add tables 1, 2,
3: the cubeful equity (per unit of cube) if the roller does not double now,
with the cube centred, owned by the roller, owned by the opponent, as
gnubg's two-sided files store them.  Values are ``stored / scale``.  A
cubeless 15-checker file (3 tables) adds table 1, the roller's winning
chance W, and table 2, its chance of winning a gammon X, under the same
equity-maximising play, each ``stored / 32767`` (int16) or as stored
(float32); the chance of losing a gammon is ``2W - 1 + X - E``.
"""
from __future__ import annotations

import dataclasses
import mmap
import os
import shutil
import struct
import time
import zlib
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from . import _bearoff as _k
from ._files import atomic_write, check_writable, directory_lock
from .errors import (DatabaseError, InvalidIdError, InvalidPositionError, MissingTableError,
                     OutputPathError, check_whole)
from .position import Position, as_board, as_boards

__all__ = [
    "open", "build_one_sided", "build_two_sided", "OneSidedTable",
    "TwoSidedTable", "ProbeResult", "index", "position", "num_positions",
    "cache_dir", "default_one_sided", "default_race_table", "race_table_points",
    "RACE_TABLE_POINTS", "default_two_sided", "probe", "get",
    "MissingTableError", "DatabaseError", "MAX_POINTS", "MAX_CHECKERS",
]

MAGIC = b"BGFBOFF\0"
VERSION = 1
HEADER = struct.Struct("<8sHHHHHHHHQdQQQI56xI")
HEADER_SIZE = HEADER.size  # 128
KIND_ONE_SIDED, KIND_TWO_SIDED = 1, 2
LAYOUT_WINDOWS, LAYOUT_INT16, LAYOUT_FLOAT32, LAYOUT_PACKED = 1, 2, 3, 4
LAYOUT_BUILD = 5          # a one-sided build in progress (its .partial file)
PACK_LIMIT = 8 << 30      # one-sided windows up to this size are saved packed
FLAG_COMPLETE = 1
MAX_POINTS = 13
MAX_CHECKERS = 15
DEFAULT_WINDOW = 32
VERIFY_LIMIT = 256 << 20  # checksum verified on open up to this data size
TABLE_NAMES = ("cubeless", "centred", "owned", "opponent_owned")
PROB_TABLES = 3           # cubeless tables with gammons: E, W (win), X (win a gammon)
PROB_SCALE = 32767.0      # fixed-point scale of W and X in int16 files
EPC_PIPS_PER_ROLL = 49.0 / 6.0  # average pips of a roll (8.1667)
BLOCK_SECONDS = 1.0       # a two-sided build's blocks of shells last about this long

assert HEADER_SIZE == 128
_PAD_START = HEADER.size - 60     # the 56 reserved (zero) bytes before the header CRC


# ------------------------------------------------------------------ indexing

def num_positions(points: int, checkers: int) -> int:
    """Number of one-sided positions: up to ``checkers`` (0..15) on
    ``points`` (at least 1) points."""
    points = check_whole("points", points, 1, error=InvalidPositionError)
    checkers = check_whole("checkers", checkers, 0, MAX_CHECKERS, error=InvalidPositionError)
    return int(_k.comb(points + checkers, points))


def _integers(x, what: str, error=InvalidPositionError) -> np.ndarray:
    """``x`` as an int64 array; ``error`` unless every entry is a whole number
    (integers, booleans excluded, or floats without a fractional part)."""
    a = np.asarray(x)
    if a.dtype.kind in "iu":
        return a.astype(np.int64, copy=False)
    if a.dtype.kind == "f" and np.isfinite(a).all() and (a == np.floor(a)).all():
        return a.astype(np.int64)
    raise error(f"{what} must be whole numbers")


def index(counts) -> np.ndarray | int:
    """gnubg's one-sided index of checker counts (point 1 first).

    ``counts`` is ``[P]`` (returns an int) or ``[n, P]`` (returns
    ``int64[n]``).  The numbering is by number of checkers, then
    lexicographic on the ascending list of the checkers' points; it does not
    depend on the table's checker limit.
    """
    a = _integers(counts, "checker counts")
    single = a.ndim == 1
    a = np.ascontiguousarray(np.atleast_2d(a), dtype=np.int64)
    if a.ndim != 2 or not 1 <= a.shape[1] <= 24:
        raise InvalidPositionError("counts must be [P] or [n, P] with 1 <= P <= 24")
    if (a < 0).any() or (a.sum(axis=1) > 15).any():
        raise InvalidPositionError("a one-sided position has 0..15 checkers")
    out = _k.ranks(a.astype(np.uint8))
    return int(out[0]) if single else out


def position(idx, points: int = 6) -> np.ndarray:
    """Inverse of :func:`index`: ``uint8[P]`` (or ``uint8[n, P]``) counts
    on ``points`` (1..24) points."""
    points = check_whole("points", points, 1, 24, error=InvalidPositionError)
    a = _integers(idx, "one-sided indices", InvalidIdError)
    single = a.ndim == 0
    a = np.ascontiguousarray(np.atleast_1d(a), dtype=np.int64)
    if (a < 0).any() or (a >= num_positions(points, 15)).any():
        raise InvalidIdError(f"one-sided index outside 0..{num_positions(points, 15) - 1}")
    out = _k.unranks(a, points)
    return out[0] if single else out


# ------------------------------------------------------------------ results

@dataclasses.dataclass(frozen=True)
class ProbeResult:
    """What a table knows about a position (player on roll's view).

    ``probs``: (win, win gammon, win backgammon, lose gammon, lose
    backgammon), cumulative.  ``equity``: cubeless money equity.
    ``cubeful``: cubeful money equities per unit of cube, both sides
    playing the cube optimally and the roller deciding now, keyed
    ``centred``, ``owned`` (by the roller), ``opponent_owned``;
    ``cubeful_no_double`` the same if the roller does not double now (what
    gnubg's files store).  ``exact``: from a two-sided table (True) or a
    one-sided convolution (False).
    """

    probs: tuple
    equity: float
    cubeful: Optional[dict] = None
    cubeful_no_double: Optional[dict] = None
    exact: bool = True

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


# ------------------------------------------------------------- file helpers

def _crc_of(buf, start: int, size: int) -> int:
    crc = 0
    mv = memoryview(buf)
    step = 64 << 20
    for off in range(start, start + size, step):
        crc = zlib.crc32(mv[off:min(off + step, start + size)], crc)
    return crc & 0xFFFFFFFF


def _pack_header(kind, points, checkers, layout, ntables, window, flags, npos,
                 scale, data_size, shells_done, data_crc) -> bytes:
    head = HEADER.pack(MAGIC, VERSION, kind, points, checkers, layout, ntables,
                       window, flags, npos, scale, HEADER_SIZE, data_size,
                       shells_done, data_crc, 0)
    crc = zlib.crc32(head[:124]) & 0xFFFFFFFF
    return head[:124] + struct.pack("<I", crc)


@dataclasses.dataclass
class _Header:
    kind: int
    points: int
    checkers: int
    layout: int
    ntables: int
    window: int
    flags: int
    npos: int
    scale: float
    data_offset: int
    data_size: int
    shells_done: int
    data_crc: int


def _parse_header(head: bytes, path) -> _Header:
    if len(head) < HEADER_SIZE:
        raise DatabaseError(f"{path}: truncated header ({len(head)} of {HEADER_SIZE} bytes)")
    (magic, version, kind, points, checkers, layout, ntables, window, flags,
     npos, scale, data_offset, data_size, shells_done, data_crc,
     head_crc) = HEADER.unpack(head[:HEADER_SIZE])
    if magic != MAGIC:
        raise DatabaseError(f"{path}: not a bgfast bear-off database (bad magic)")
    if zlib.crc32(head[:124]) & 0xFFFFFFFF != head_crc:
        raise DatabaseError(f"{path}: corrupt header (checksum mismatch)")
    if version != VERSION:
        raise DatabaseError(f"{path}: format version {version}, this bgfast reads version {VERSION}")
    if any(head[_PAD_START:124]):
        raise DatabaseError(f"{path}: inconsistent header (reserved bytes are not zero)")
    h = _Header(kind, points, checkers, layout, ntables, window, flags, npos,
                scale, data_offset, data_size, shells_done, data_crc)
    _check_header(h, path)
    return h


def _one_sided_data_size(n: int, window: int) -> int:
    return _pad8(2 * n) + 2 * n * window * 4


def _state_layout(n: int, window: int):
    """Where a one-sided build state lies in a ``.partial`` file: a list of
    ``(name, dtype, shift, offset, bytes per row)`` and the data size."""
    out, off = [], 0
    for name, dt, shift in _k.ONE_SIDED_STATE:
        dt = np.dtype(dt)
        row = dt.itemsize * (window if name.startswith("dist") else 1)
        off = _pad8(off)
        out.append((name, dt, shift, off, row))
        off += row * (n + shift)
    return out, _pad8(off)


def _gather_rows(values, lengths, window: int, offsets) -> np.ndarray:
    """Windows ``float32[N, window]``: row i holds ``lengths[i]`` values from
    ``values`` at ``offsets[i]``, and zeros after them."""
    cols = np.arange(window)
    mask = cols[None, :] < np.asarray(lengths)[:, None]
    out = np.zeros((mask.shape[0], window), dtype=np.float32)
    out[mask] = values[(np.asarray(offsets, dtype=np.int64)[:, None] + cols[None, :])[mask]]
    return out


def _pad8(x: int) -> int:
    return (x + 7) // 8 * 8


def _same_float(x: float, y: float) -> bool:
    """``x`` is ``y`` bit for bit (so -0.0 is not 0.0, and NaN is nothing)."""
    return struct.pack("<d", x) == struct.pack("<d", y)


def _check_header(h: _Header, path) -> None:
    """Refuse a header whose fields hold values no writer of this module
    produces (a file edited with its header checksum recomputed): each
    field against what :meth:`OneSidedTable.save`, the one-sided build's
    checkpoints and :func:`build_two_sided` write for the table it
    describes.  The data checksum is checked on open (see :func:`open`)."""
    bad = None
    complete = h.flags == FLAG_COMPLETE
    if h.data_offset != HEADER_SIZE:
        bad = "data offset"
    elif h.flags not in (0, FLAG_COMPLETE):
        bad = "flags"
    elif h.kind == KIND_ONE_SIDED:
        building = h.layout == LAYOUT_BUILD
        if not (1 <= h.points <= (MAX_POINTS if building else 24) and 1 <= h.checkers <= 15
                and h.layout in (LAYOUT_WINDOWS, LAYOUT_PACKED, LAYOUT_BUILD)
                and h.ntables == 2 and 8 <= h.window <= 64):
            bad = "one-sided parameters"
        elif complete == building:
            bad = "flags"                          # a build state is never complete
        elif h.npos != num_positions(h.points, h.checkers):
            bad = "number of positions"
        elif not _same_float(h.scale, 0.0):
            bad = "scale"
        elif h.layout == LAYOUT_WINDOWS and h.data_size != _one_sided_data_size(h.npos, h.window):
            bad = "data size"
        elif building and h.data_size != _state_layout(h.npos, h.window)[1]:
            bad = "data size"
        elif h.layout == LAYOUT_PACKED and not (
                h.data_size >= _pad8(4 * h.npos) and (h.data_size - _pad8(4 * h.npos)) % 4 == 0
                and h.data_size <= _pad8(4 * h.npos) + 2 * h.npos * h.window * 4):
            bad = "data size"
        # a build state counts the pip groups solved (pip counts 0..points * checkers)
        elif h.shells_done > (h.points * h.checkers + 1 if building else 0):
            bad = "pip groups solved"
        elif building and h.data_crc:
            bad = "data checksum"
    elif h.kind == KIND_TWO_SIDED:
        item = {LAYOUT_INT16: 2, LAYOUT_FLOAT32: 4}.get(h.layout)
        if not (h.points == 6 and 1 <= h.checkers <= 15 and item and h.ntables in (1, 3, 4)
                and h.window == 0):
            bad = "two-sided parameters"
        elif h.npos != num_positions(6, h.checkers):
            bad = "number of positions"
        elif h.data_size != h.ntables * h.npos * h.npos * item:
            bad = "data size"
        elif not _two_sided_scale_ok(h.layout, h.ntables, h.scale):
            bad = "scale"
        elif h.shells_done > h.npos or (complete and h.shells_done != h.npos):
            bad = "shells solved"
        elif not complete and h.data_crc:
            bad = "data checksum"
    else:
        bad = "kind"
    if bad:
        raise DatabaseError(f"{path}: inconsistent header ({bad})")


def _two_sided_scale_ok(layout: int, ntables: int, scale: float) -> bool:
    """The scales :func:`build_two_sided` writes: 1 for float32; for int16
    16383 with gammons (the probability tables, T = 3) and 32767 without
    (T = 1), either for cubeful tables (T = 4)."""
    if layout == LAYOUT_FLOAT32:
        return _same_float(scale, 1.0)
    allowed = {1: (32767.0,), 3: (16383.0,), 4: (16383.0, 32767.0)}[ntables]
    return any(_same_float(scale, x) for x in allowed)


def _available_memory() -> int:
    try:
        with builtins_open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 1 << 62


import builtins as _builtins  # noqa: E402

builtins_open = _builtins.open


# --------------------------------------------------------- position helpers

def _rows(boards, points: int, checkers: int, what: str):
    """Boards -> (roller counts, opponent counts) uint8[n, points] and a mask
    of the boards inside the table (no checker beyond ``points``, on the bar,
    or above ``checkers`` a side, and neither side finished)."""
    b = as_boards(boards)
    rows = b[:, ::-1, :]  # row 0 -> roller (board row 1), row 1 -> opponent
    inside = (rows[:, :, points:].sum(axis=2) == 0).all(axis=1)
    n = rows[:, :, :points].sum(axis=2)
    inside &= (n <= checkers).all(axis=1) & (n > 0).all(axis=1)
    return (np.ascontiguousarray(rows[:, 0, :points]),
            np.ascontiguousarray(rows[:, 1, :points]), inside, n)


def _single_board(pos):
    if isinstance(pos, Position):
        return pos.board[None]
    return as_board(pos)[None]


class _Table:
    """Common context-manager / probe plumbing."""

    path: Optional[str] = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self) -> None:
        mm = getattr(self, "_mmap", None)
        self._release()
        if mm is not None:
            try:
                mm.close()
            except BufferError:  # views still alive: the GC closes it
                pass
            self._mmap = None

    def _release(self) -> None:
        pass

    def probe(self, position) -> ProbeResult:
        """Values of one position (a :class:`~bgfast.Position` or board).

        Raises :class:`MissingTableError` for a position outside the table."""
        res = self.probe_batch(_single_board(position))
        if not res["inside"][0]:
            raise MissingTableError(f"position outside the {self.describe()} table")
        return self._result(res, 0)

    def get(self, position, default=None):
        """Like :meth:`probe`, but ``default`` for a position outside the table."""
        try:
            return self.probe(position)
        except MissingTableError:
            return default


# ------------------------------------------------------------------ one-sided

class OneSidedTable(_Table):
    """A one-sided (race) table: up to ``checkers`` checkers on ``points`` points."""

    def __init__(self, points, checkers, start_r, dist_r, start_g, dist_g,
                 path=None, mm=None, source="bgfast", data_crc=None, packed=None):
        self.points = int(points)
        self.checkers = int(checkers)
        self.size = num_positions(self.points, self.checkers)
        self.start_r, self.start_g = start_r, start_g
        # windows float32[N, window] (dist_r, dist_g), or a packed file's rows
        # (values_r, lengths_r, values_g, lengths_g, window), expanded into
        # windows only when asked for
        self._dist = (dist_r, dist_g)
        self._packed = packed
        self.window = int(packed[4] if dist_r is None else dist_r.shape[1])
        self.path = None if path is None else str(path)
        self.source = source
        #: the CRC-32 of the file's data (None: not read from a bgfast file)
        self.data_crc = data_crc
        self._mmap = mm
        self._moments = None

    kind = "one-sided"

    def describe(self) -> str:
        return f"one-sided {self.points}-point {self.checkers}-checker"

    def info(self) -> dict:
        return {"kind": self.kind, "points": self.points, "checkers": self.checkers,
                "positions": self.size, "window": self.window, "path": self.path,
                "source": self.source}

    def _release(self):
        self.start_r = self.start_g = None
        self._dist = (None, None)
        self._packed = None

    def _windows(self):
        if self._dist[0] is None and self._packed is not None:
            vr, lr, vg, lg, w = self._packed
            self._dist = (_k.unpack_rows(vr, lr, w), _k.unpack_rows(vg, lg, w))
        return self._dist

    @property
    def dist_r(self):
        """``float32[N, window]``: P(exactly start_r[i] + k rolls to bear off)."""
        return self._windows()[0]

    @property
    def dist_g(self):
        """``float32[N, window]``: the same for taking the first checker off."""
        return self._windows()[1]

    def kernel_rows(self) -> tuple:
        """The rows the evaluation kernels read (see
        ``bgfast._evaluate.set_tables``): ``(points, values_r, offsets_r,
        lengths_r, starts_r, values_g, offsets_g, lengths_g, starts_g)``,
        views of a packed file's data where the table has one."""
        if self.checkers != 15:
            raise DatabaseError(f"the {self.describe()} table cannot value races of 15 checkers")
        out = [self.points]
        for i, st in ((0, self.start_r), (2, self.start_g)):
            if self._packed is not None:        # rows one after the other
                v, ln = self._packed[i], self._packed[i + 1]
                off = np.cumsum(ln, dtype=np.int64) - ln
            else:                               # row k at k * window
                d = np.ascontiguousarray(self._windows()[i // 2], np.float32)
                v, ln = d.reshape(-1), _k.row_lengths(d)
                off = np.arange(self.size, dtype=np.int64) * self.window
            out += [v, off, np.ascontiguousarray(ln, np.uint8), np.ascontiguousarray(st, np.uint8)]
        return tuple(out)

    # ---- indices
    def index_of(self, counts) -> np.ndarray | int:
        """Table index of one-sided checker counts ([P] or [n, P]);
        :class:`MissingTableError` if outside this table."""
        a = _integers(counts, "checker counts")
        single = a.ndim == 1
        a = np.atleast_2d(a)
        if a.shape[1] != self.points:
            if a.shape[1] > self.points and not a[:, self.points:].any():
                a = a[:, :self.points]
            else:
                raise MissingTableError(f"counts of length {a.shape[1]} outside the {self.describe()} table")
        a = a.astype(np.int64)
        if (a < 0).any():
            raise InvalidPositionError("negative checker count")
        if (a.sum(axis=1) > self.checkers).any():
            raise MissingTableError(f"more than {self.checkers} checkers: outside the {self.describe()} table")
        out = _k.ranks(np.ascontiguousarray(a, dtype=np.uint8))
        return int(out[0]) if single else out

    def _resolve(self, x):
        """An index (int), counts ``[P]`` or counts ``[n, P]`` ->
        (int64 indices, scalar?)."""
        a = np.asarray(x)
        if a.ndim == 0:
            if a.dtype.kind not in "iu":
                raise InvalidPositionError("a one-sided index must be an integer")
            idx, scalar = np.array([int(a)], dtype=np.int64), True
        elif a.ndim in (1, 2):
            idx, scalar = np.atleast_1d(self.index_of(a)), a.ndim == 1
        else:
            raise InvalidPositionError("expected an index, counts [P] or counts [n, P]")
        if (idx < 0).any() or (idx >= self.size).any():
            raise MissingTableError(f"index outside 0..{self.size - 1}")
        return idx, scalar

    def _as_indices(self, x) -> np.ndarray:
        return self._resolve(x)[0]

    # ---- distributions
    def distribution(self, counts, gammon: bool = False) -> np.ndarray:
        """``float64[L]``: P(exactly n rolls) for n = 0..L-1, for one position
        (counts ``[P]`` or an index).  ``gammon=True``: rolls until the first
        checker is off."""
        i = int(self._resolve(counts)[0][0])
        start, dist = (self.start_g, self.dist_g) if gammon else (self.start_r, self.dist_r)
        s = int(start[i])
        out = np.zeros(s + self.window, dtype=np.float64)
        out[s:] = dist[i]
        return np.trim_zeros(out, "b") if out.any() else out[:1]

    def _all_moments(self):
        if self._moments is None:
            k = np.arange(self.window, dtype=np.float64)
            res = []
            for start, dist in ((self.start_r, self.dist_r), (self.start_g, self.dist_g)):
                d = np.asarray(dist, dtype=np.float64)
                s = np.asarray(start, dtype=np.float64)
                # einsum, not a BLAS product: no multi-threaded BLAS call (whose
                # threads then spin for a while) in a process about to fork workers
                m1 = np.einsum("ij,j->i", d, k)
                m2 = np.einsum("ij,j->i", d, k * k)
                mean = s + m1
                var = m2 - m1 * m1
                res.append((mean, np.maximum(var, 0.0)))
            self._moments = res
        return self._moments

    def moments(self, indices, gammon: bool = False):
        """``(mean, variance)`` of the number of rolls, ``float64[n]`` each,
        for an array of table indices (vectorised)."""
        idx = _integers(indices, "table indices")
        if (idx < 0).any() or (idx >= self.size).any():
            raise MissingTableError(f"index outside 0..{self.size - 1}")
        mean, var = self._all_moments()[1 if gammon else 0]
        return mean[idx], var[idx]

    def mean(self, x, gammon: bool = False):
        """Expected number of rolls of an index, counts [P] or counts [n, P]."""
        idx, scalar = self._resolve(x)
        out = self.moments(idx, gammon)[0]
        return float(out[0]) if scalar else out

    def variance(self, x, gammon: bool = False):
        """Variance of the number of rolls (like :meth:`mean`)."""
        idx, scalar = self._resolve(x)
        out = self.moments(idx, gammon)[1]
        return float(out[0]) if scalar else out

    def epc(self, x):
        """Effective pip count: expected rolls times 49/6 pips per roll."""
        return self.mean(x) * EPC_PIPS_PER_ROLL

    # ---- race by convolution
    def race(self, roller, opponent) -> np.ndarray:
        """Race probabilities (5 values) by convolution for indices or counts
        of the roller and the opponent (arrays broadcast): ``float64[n, 5]``.

        Gammons count for a side that still has all 15 checkers (only
        meaningful in a 15-checker table)."""
        i, si = self._resolve(roller)
        j, sj = self._resolve(opponent)
        i, j = np.broadcast_arrays(i, j)
        out = self._race(np.ascontiguousarray(i), np.ascontiguousarray(j))
        return out[0] if si and sj else out

    def _dense(self, idx, gammon):
        start, dist = (self.start_g, self.dist_g) if gammon else (self.start_r, self.dist_r)
        s = np.asarray(start)[idx].astype(np.int64)
        L = int(s.max(initial=0)) + self.window + 1
        out = np.zeros((idx.shape[0], L), dtype=np.float64)
        cols = s[:, None] + np.arange(self.window)[None, :]
        np.put_along_axis(out, cols, np.asarray(dist)[idx].astype(np.float64), axis=1)
        return out

    def _race(self, i, j) -> np.ndarray:
        cnt = position(i, self.points).sum(axis=1), position(j, self.points).sum(axis=1)
        return self._race_counted(i, j, cnt[0] == 15, cnt[1] == 15)

    def _race_counted(self, i, j, full_r, full_o) -> np.ndarray:
        """Race probabilities of indices ``i`` against ``j``; ``full_*``:
        which sides still have all 15 checkers (can be gammoned)."""
        return _k.race_probs(np.ascontiguousarray(self.dist_r, np.float32),
                             np.ascontiguousarray(self.start_r, np.uint8),
                             np.ascontiguousarray(self.dist_g, np.float32),
                             np.ascontiguousarray(self.start_g, np.uint8),
                             np.ascontiguousarray(i, np.int64), np.ascontiguousarray(j, np.int64),
                             np.ascontiguousarray(full_r, np.uint8),
                             np.ascontiguousarray(full_o, np.uint8))

    def inside(self, boards) -> np.ndarray:
        """``bool[n]``: which of ``uint8[n, 2, 25]`` boards the table holds
        (what :meth:`probe_batch` reports as ``inside``, without the
        convolution)."""
        return _rows(boards, self.points, self.checkers, "one-sided")[2]

    def probe_batch(self, boards) -> dict:
        """Race probabilities for ``uint8[n, 2, 25]`` boards by convolution.

        Returns a dict of arrays: ``probs float64[n, 5]``, ``equity
        float64[n]`` and ``inside bool[n]`` (False rows are zero)."""
        r, o, inside, _ = _rows(boards, self.points, self.checkers, "one-sided")
        n = r.shape[0]
        probs = np.zeros((n, 5), dtype=np.float64)
        if inside.any():
            r, o = r[inside], o[inside]
            probs[inside] = self._race_counted(_k.ranks(r), _k.ranks(o), r.sum(axis=1) == 15,
                                               o.sum(axis=1) == 15)
        eq = 2 * probs[:, 0] - 1 + probs[:, 1] - probs[:, 3]
        eq[~inside] = 0.0
        return {"probs": probs, "equity": eq, "inside": inside}

    def _result(self, res, k) -> ProbeResult:
        return ProbeResult(tuple(float(x) for x in res["probs"][k]), float(res["equity"][k]),
                           exact=False)

    # ---- file
    def save(self, path) -> None:
        """Write the table to ``path`` atomically (temporary file + rename):
        packed (layout 4) when its windows take at most :data:`PACK_LIMIT`
        bytes, else as windows that are memory-mapped when opened."""
        n, w = self.size, self.window
        if 2 * n * w * 4 <= PACK_LIMIT:
            layout = LAYOUT_PACKED
            dr = np.ascontiguousarray(self.dist_r, np.float32)
            dg = np.ascontiguousarray(self.dist_g, np.float32)
            lr, lg = _k.row_lengths(dr), _k.row_lengths(dg)
            heads = [self.start_r, self.start_g, lr, lg, np.zeros(_pad8(4 * n) - 4 * n, np.uint8)]
            values = [_k.pack_rows(dr, lr), _k.pack_rows(dg, lg)]
        else:
            layout = LAYOUT_WINDOWS
            # buffers, not copies (a 13-point table has 9.6 GB of distributions)
            heads = [self.start_r, self.start_g, np.zeros(_pad8(2 * n) - 2 * n, np.uint8)]
            values = [self.dist_r, self.dist_g]
        parts = ([memoryview(np.ascontiguousarray(a, np.uint8)).cast("B") for a in heads]
                 + [memoryview(np.ascontiguousarray(a, "<f4")).cast("B") for a in values])
        crc = 0
        for p in parts:
            crc = zlib.crc32(p, crc)
        head = _pack_header(KIND_ONE_SIDED, self.points, self.checkers, layout, 2, w,
                            FLAG_COMPLETE, n, 0.0, sum(p.nbytes for p in parts), 0,
                            crc & 0xFFFFFFFF)
        atomic_write(path, [head] + parts)


def one_sided_memory(points: int, checkers: int = 15, window: int = DEFAULT_WINDOW) -> int:
    """Bytes of memory a one-sided build needs (tables + move table + work)."""
    n = num_positions(points, checkers)
    # the two distributions and their starts, plus counts, pip order,
    # inverse order, means and per-position scratch while building
    return n * (8 * window + 2) + n * (9 * points + 100) + (64 << 20)


def build_one_sided(points: int = 6, checkers: int = 15, path=None, *,
                    window: int = DEFAULT_WINDOW, progress: Optional[Callable] = None,
                    threads: Optional[int] = None, checkpoint_seconds: float = 60.0,
                    resume: bool = True) -> OneSidedTable:
    """Build a one-sided table; write it to ``path`` (atomically) if given.

    ``progress(done, total)`` is called now and then.  Refuses more than
    :data:`MAX_POINTS` points with the memory the table would need.  With
    ``path``, a build that runs longer than ``checkpoint_seconds`` saves the
    positions solved so far to ``path + ".partial"`` at that interval, and a
    killed build resumes from there (when ``resume``); the result is the
    same as an uninterrupted build's.  ``path`` is checked to be writable
    before the build starts.  ``points`` (>= 1), ``checkers`` (1..15),
    ``window`` (8..64) and ``threads`` (None or >= 1) are integers."""
    checkers = check_whole("checkers", checkers, 1, MAX_CHECKERS,
                           error=InvalidPositionError)
    points = check_whole("points", points, 1, error=InvalidPositionError)
    window = check_whole("window", window, 8, 64, error=InvalidPositionError)
    threads = _threads(threads, os.cpu_count() or 1)
    need = one_sided_memory(points, checkers, window)
    if points > MAX_POINTS:
        raise DatabaseError(
            f"a one-sided table on {points} points with {checkers} checkers has "
            f"{num_positions(points, checkers):,} positions and needs {need / 2**30:.1f} GiB "
            f"of memory to build; the limit is {MAX_POINTS} points")
    avail = _available_memory()
    if need > avail:
        raise DatabaseError(
            f"a one-sided table on {points} points with {checkers} checkers needs "
            f"{need / 2**30:.1f} GiB of memory to build; {avail / 2**30:.1f} GiB available")
    state, start, saver, partial = None, 0, None, None
    if path is not None:
        check_writable(path, "table file")
        partial = Path(str(path) + ".partial")
        if resume:
            state, start = _read_one_sided_state(partial, points, checkers, window)
        saver = _OneSidedCheckpoints(partial, points, checkers, window, checkpoint_seconds,
                                     exists=state is not None)
    sr, dr, sg, dg, _lost = _k.build_one_sided(
        points, checkers, window, progress, threads,
        state=state, start_group=start, checkpoint=saver)
    table = OneSidedTable(points, checkers, sr, dr, sg, dg)
    if path is not None:
        table.save(path)
        table.path = str(path)
        partial.unlink(missing_ok=True)
    return table


def _new_sparse_file(partial: Path, head: bytes, data_size: int, what: str) -> None:
    """Create ``partial``: ``head`` and ``data_size`` bytes of (sparse) zeros.
    The data is only written later, so refuse now, naming ``what`` needs the
    space, when the disk cannot hold it (rather than fail half-way: a full
    disk is a SIGBUS on a mapping)."""
    free = shutil.disk_usage(partial.parent if str(partial.parent) else ".").free
    if free < HEADER_SIZE + data_size:
        raise DatabaseError(f"{what} needs {data_size / 2**30:.1f} GiB of disk, "
                            f"only {free / 2**30:.1f} GiB are free there")
    with builtins_open(partial, "wb") as f:
        f.write(head)
        f.truncate(HEADER_SIZE + data_size)


class _OneSidedCheckpoints:
    """Saves the solved rows of a one-sided build to its ``.partial`` file,
    at most every ``seconds``: the rows first (fsync), then the header that
    counts them (fsync), so a kill at any moment leaves a consistent file."""

    def __init__(self, partial: Path, points, checkers, window, seconds, exists: bool):
        self.partial, self.points, self.checkers, self.window = partial, points, checkers, window
        self.n = num_positions(points, checkers)
        self.layout, self.size = _state_layout(self.n, window)
        self.seconds = float(seconds)
        self.exists = exists
        self.written = 0       # rows [0, written) are in the file (after a resume: rewritten once)
        self.last = time.monotonic()

    def _header(self, groups: int) -> bytes:
        return _pack_header(KIND_ONE_SIDED, self.points, self.checkers, LAYOUT_BUILD, 2,
                            self.window, 0, self.n, 0.0, self.size, groups, 0)

    def __call__(self, state, groups: int, positions: int) -> None:
        if time.monotonic() - self.last < self.seconds:
            return
        if not self.exists:
            _new_sparse_file(self.partial, self._header(0), self.size,
                             f"{self.partial}: the build state")
            self.exists = True
        fd = os.open(self.partial, os.O_RDWR)
        try:
            for name, _dt, shift, off, row in self.layout:
                buf = memoryview(np.ascontiguousarray(state[name])).cast("B")
                lo, hi = (self.written + shift) * row, (positions + shift) * row
                os.pwrite(fd, buf[lo:hi], HEADER_SIZE + off + lo)
            os.fsync(fd)
            os.pwrite(fd, self._header(groups), 0)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.written = positions
        self.last = time.monotonic()


def _read_one_sided_state(partial: Path, points, checkers, window):
    """``(state, groups solved)`` of a checkpointed build of this table, or
    ``(None, 0)`` (and the file removed) when there is none that fits."""
    if not partial.exists():
        return None, 0
    n = num_positions(points, checkers)
    layout, size = _state_layout(n, window)
    try:
        with builtins_open(partial, "rb") as f:
            h = _parse_header(f.read(HEADER_SIZE), partial)
            fits = ((h.kind, h.points, h.checkers, h.layout, h.window, h.npos) ==
                    (KIND_ONE_SIDED, points, checkers, LAYOUT_BUILD, window, n)
                    and os.fstat(f.fileno()).st_size == HEADER_SIZE + size)
            if fits:
                state = {}
                for name, dt, shift, off, row in layout:
                    f.seek(HEADER_SIZE + off)
                    a = np.fromfile(f, dtype=dt, count=(n + shift) * (row // dt.itemsize))
                    state[name] = a.reshape(n, window) if name.startswith("dist") else a
                return state, int(h.shells_done)
    except DatabaseError:
        pass
    partial.unlink()
    return None, 0


def _threads(threads, default: int = 1):
    """The number of build threads: ``threads``, or ``default`` (all cores
    for one-sided builds, which wait for their threads once per pip group;
    one thread for two-sided builds, which synchronise them once or twice
    per shell: on a busy machine that costs more than it gains, measured:
    6x11 took 52 s on one thread, and an ETA of 25 minutes on two, on a
    loaded 2-core machine).  Pass ``threads=2`` (``--threads 2``) for a
    two-sided build on an idle machine.  The tables do not depend on it.
    ``threads`` other than None must be an integer >= 1."""
    if threads is None:
        return max(1, int(default))
    return check_whole("threads", threads, 1)


# ------------------------------------------------------------------ two-sided

_ORDER_CACHE: dict = {}


def _build_order(checkers):
    if checkers not in _ORDER_CACHE:
        _ORDER_CACHE[checkers] = _k.build_order(checkers)[:2]
    return _ORDER_CACHE[checkers]


class TwoSidedTable(_Table):
    """A two-sided table: up to ``checkers`` a side on 6 points."""

    kind = "two-sided"

    def __init__(self, checkers, values, scale, layout, path=None, mm=None,
                 source="bgfast", gnubg_pairs=False, gammon_checkers=15):
        self.points = 6
        self.checkers = int(checkers)
        self.size = num_positions(6, self.checkers)
        self._values = values            # [T, N*N]
        self.ntables = int(values.shape[0])
        self.cubeful = self.ntables == 4
        #: the table holds the winning and gammon chances (T == 3: E, W, X)
        self.probabilities = self.ntables == PROB_TABLES
        self.gammon_checkers = int(gammon_checkers)
        self.scale = float(scale)
        self.pscale = PROB_SCALE if layout == LAYOUT_INT16 else 1.0
        self.layout = layout
        self.path = None if path is None else str(path)
        self._mmap = mm
        self.source = source
        self._gnubg_pairs = gnubg_pairs  # gnubg file: (i * N + j) order, gnubg indices
        if not gnubg_pairs:
            self._inv = _build_order(self.checkers)[1]

    def describe(self) -> str:
        return f"two-sided 6-point {self.checkers}-checker"

    def info(self) -> dict:
        return {"kind": self.kind, "points": 6, "checkers": self.checkers,
                "positions": self.size, "pairs": self.size ** 2, "cubeful": self.cubeful,
                "probabilities": self.probabilities,
                "layout": {LAYOUT_INT16: "int16", LAYOUT_FLOAT32: "float32"}.get(self.layout, "uint16"),
                "scale": self.scale, "path": self.path, "source": self.source}

    def _release(self):
        self._values = None

    def values(self, roller, opponent) -> np.ndarray:
        """Stored values ``float64[n, T]`` for gnubg indices (arrays) of the
        roller and the opponent: cubeless equity, then the no-double cubeful
        equities (centred, owned, opponent owns) in cubeful tables, or the
        roller's winning and gammon-winning chances in tables with
        :attr:`probabilities`.  Indices that are not whole numbers raise
        :class:`InvalidIdError`, indices outside the table
        :class:`MissingTableError`."""
        i = np.atleast_1d(_integers(roller, "two-sided indices", InvalidIdError))
        j = np.atleast_1d(_integers(opponent, "two-sided indices", InvalidIdError))
        if ((i < 0) | (i >= self.size) | (j < 0) | (j >= self.size)).any():
            raise MissingTableError(f"index outside the {self.describe()} table")
        if self._values is None:
            raise DatabaseError("table is closed")
        N = self.size
        if self._gnubg_pairs:
            flat = i * N + j
            raw = np.asarray(self._values)[:, flat].T.astype(np.float64)
            return raw / self.scale - 1.0
        flat = self._inv[j].astype(np.int64) * N + self._inv[i]
        v = self._values
        out = np.empty((flat.shape[0], self.ntables), dtype=np.float64)
        for t in range(self.ntables):
            out[:, t] = v[t][flat]
        if self.probabilities:
            out[:, 0] /= self.scale
            out[:, 1:] /= self.pscale
            return out
        return out / self.scale

    def probe_batch(self, boards) -> dict:
        """Exact values for ``uint8[n, 2, 25]`` boards.

        Returns a dict of arrays: ``probs float64[n, 5]``, ``equity``,
        ``inside bool[n]`` and, for cubeful tables, ``cubeful`` and
        ``cubeful_no_double`` (``float64[n, 3]``: centred, owned by the
        roller, owned by the opponent)."""
        r, o, inside, counts = _rows(boards, 6, self.checkers, "two-sided")
        n = r.shape[0]
        vals = np.zeros((n, self.ntables), dtype=np.float64)
        if inside.any():
            vals[inside] = self.values(_k.ranks(r[inside]), _k.ranks(o[inside]))
        eq = vals[:, 0]
        probs = np.zeros((n, 5), dtype=np.float64)
        full_r = counts[:, 0] == self.gammon_checkers
        full_o = counts[:, 1] == self.gammon_checkers
        if self.probabilities:
            # E = 2W - 1 + WG - LG gives the chance of losing a gammon
            win, wg = vals[:, 1], vals[:, 2]
            probs[:, 0] = win
            probs[:, 1] = np.minimum(wg, win)
            probs[:, 3] = np.minimum(np.maximum(2.0 * win - 1.0 + wg - eq, 0.0), 1.0 - win)
            probs[:, 1] = np.where(full_o, probs[:, 1], 0.0)   # only a full side is gammoned
            probs[:, 3] = np.where(full_r, probs[:, 3], 0.0)
        elif self.checkers < self.gammon_checkers:
            probs[:, 0] = (eq + 1.0) / 2.0
        else:
            # with gammons the equity alone does not give the probabilities
            probs[:] = np.nan
            simple = inside & ~full_r & ~full_o
            probs[simple] = 0.0
            probs[simple, 0] = (eq[simple] + 1.0) / 2.0
        probs[~inside] = 0.0
        out = {"probs": np.clip(probs, 0.0, 1.0), "equity": eq, "inside": inside}
        if self.cubeful:
            nd = vals[:, 1:4]
            dt = np.minimum(2.0 * nd[:, 2], 1.0)
            cf = nd.copy()
            cf[:, 0] = np.maximum(nd[:, 0], dt)
            cf[:, 1] = np.maximum(nd[:, 1], dt)
            out["cubeful"] = cf
            out["cubeful_no_double"] = nd
        return out

    def _result(self, res, k) -> ProbeResult:
        probs = tuple(float(x) for x in res["probs"][k])
        if any(np.isnan(probs)):
            probs = None
        cf = nd = None
        if self.cubeful:
            cf = dict(zip(TABLE_NAMES[1:], (float(x) for x in res["cubeful"][k])))
            nd = dict(zip(TABLE_NAMES[1:], (float(x) for x in res["cubeful_no_double"][k])))
        return ProbeResult(probs, float(res["equity"][k]), cf, nd, True)


def two_sided_bytes(checkers: int, cubeful: bool = False, layout: str = "int16") -> int:
    """Size of a two-sided table's data in bytes (a cubeless 15-checker
    table also holds the winning and gammon chances: 3 tables).
    ``checkers`` is 1..15 and ``layout`` "int16" or "float32"."""
    checkers = check_whole("checkers of a two-sided table", checkers, 1, MAX_CHECKERS,
                           error=InvalidPositionError)
    if layout not in ("int16", "float32"):
        raise InvalidPositionError(f"layout must be 'int16' or 'float32', not {layout!r}")
    n = num_positions(6, checkers)
    t = 4 if cubeful else (PROB_TABLES if checkers == 15 else 1)
    return t * n * n * (2 if layout == "int16" else 4)


def build_two_sided(checkers: int, path=None, *, cubeful: bool = False,
                    layout: Optional[str] = None, progress: Optional[Callable] = None,
                    threads: Optional[int] = None, checkpoint_seconds: float = 60.0,
                    resume: bool = True, block_work: Optional[int] = None,
                    _gammon_checkers: int = 15) -> TwoSidedTable:
    """Build the two-sided table for up to ``checkers`` a side on 6 points.

    With ``path`` the values are solved in place in a memory-mapped file
    ``path + ".partial"``, checkpointed every ``checkpoint_seconds`` (a killed
    build resumes from the last checkpoint when ``resume``), then checksummed
    and renamed to ``path``.  Without a path the table lives in memory.

    ``layout``: "float32" (default up to 10 checkers) or "int16" (fixed point:
    scale 32767 per unit of equity, 16383 when gammons count at 15
    checkers; default from 11 checkers).  ``progress(done, total)`` gets work
    units proportional to the shells' cost (m^2 weighted), so ETA = elapsed *
    (total - done) / done.  Shells are solved in blocks (progress and
    checkpoints happen between blocks) of about ``block_work`` pair values,
    or by default of about :data:`BLOCK_SECONDS` (at most
    ``checkpoint_seconds``, at least 0.05 s) of work each; the table does not
    depend on the blocks.  ``path`` is checked to be writable before the
    build starts.  (``_gammon_checkers`` is for tests: count gammons for a side
    that still has that many checkers, so that small in-memory tables
    exercise the gammon logic of the 15-checker table; a file does not
    record it, so a file built with it probes as if gammons came at 15.)"""
    checkers = check_whole("checkers of a two-sided table", checkers, 1, MAX_CHECKERS,
                           error=InvalidPositionError)
    threads = _threads(threads)
    if layout is None:
        layout = "float32" if checkers <= 10 else "int16"
    if layout not in ("int16", "float32"):
        raise InvalidPositionError("layout must be 'int16' or 'float32'")
    N = num_positions(6, checkers)
    gammons = checkers == _gammon_checkers
    # with gammons the equity alone does not give the probabilities: a
    # cubeless table then also solves W and X (PROB_TABLES)
    T = 4 if cubeful else (PROB_TABLES if gammons else 1)
    code = LAYOUT_INT16 if layout == "int16" else LAYOUT_FLOAT32
    dtype = np.dtype("<i2") if layout == "int16" else np.dtype("<f4")
    scale = (16383.0 if gammons else 32767.0) if layout == "int16" else 1.0
    data_size = T * N * N * dtype.itemsize
    if path is None and data_size > _available_memory():
        raise DatabaseError(f"the table needs {data_size / 2**30:.1f} GiB of memory; give a path "
                            "to build it in a memory-mapped file")
    if path is not None:
        check_writable(path, "table file")
    offsets, succ = _k.successor_table(checkers)
    order, inv = _build_order(checkers)
    nchk = position(order, 6).sum(axis=1)
    winv = np.where((nchk == _gammon_checkers) & gammons, 2.0, 1.0) * scale
    gam = ((nchk == _gammon_checkers) & gammons).astype(np.float64)
    pscale = PROB_SCALE if layout == "int16" else 1.0

    mm = None
    start = 0
    if path is None:
        values = np.zeros((T, N * N), dtype=dtype)
    else:
        path = Path(path)
        partial = Path(str(path) + ".partial")
        head = _pack_header(KIND_TWO_SIDED, 6, checkers, code, T, 0, 0, N, scale,
                            data_size, 0, 0)
        if resume and partial.exists():
            with builtins_open(partial, "rb") as f:
                old = f.read(HEADER_SIZE)
            try:
                h = _parse_header(old, partial)
                same = (h.kind, h.checkers, h.layout, h.ntables, h.scale) == \
                    (KIND_TWO_SIDED, checkers, code, T, scale)
            except DatabaseError:
                same = False
            if same and partial.stat().st_size == HEADER_SIZE + data_size:
                start = int(h.shells_done)
            else:
                partial.unlink()
        if start == 0:
            _new_sparse_file(partial, head, data_size, f"{path}: the table")
        fh = builtins_open(partial, "r+b")
        mm = mmap.mmap(fh.fileno(), HEADER_SIZE + data_size)
        fh.close()
        values = np.frombuffer(mm, dtype=dtype, offset=HEADER_SIZE).reshape(T, N * N)

    def checkpoint(done):
        if mm is None:
            return
        mm.flush()
        mm[:HEADER_SIZE] = _pack_header(KIND_TWO_SIDED, 6, checkers, code, T, 0, 0, N, scale,
                                        data_size, done, 0)
        mm.flush()

    # shell m costs ~ m: blocks [m, e) of (e^2 - m^2) / 2 ~ target_block pair
    # values, sized by the rate of the blocks before them
    total = N * (N + 1) // 2
    m = start
    last = time.monotonic()
    largest = max(1 << 22, total // 2000)
    seconds = min(BLOCK_SECONDS, max(float(checkpoint_seconds), 0.05))
    target_block = int(block_work) if block_work else 1 << 16
    while m < N:
        e = min(N, max(m + 1, int((m * m + 2 * target_block) ** 0.5)))
        t = time.monotonic()
        if T == PROB_TABLES:
            _k.solve_shells(values, N, offsets, succ, winv, scale, m, e, threads,
                            gam=gam, pscale=pscale)
        else:
            _k.solve_shells(values, N, offsets, succ, winv, scale, m, e, threads)
        if not block_work:
            rate = (e * e - m * m) / 2 / max(time.monotonic() - t, 1e-3)
            target_block = int(max(1 << 12, min(4 * target_block, largest, rate * seconds)))
        m = e
        if progress is not None:
            progress(m * (m + 1) // 2, total)
        if mm is not None and (time.monotonic() - last > checkpoint_seconds or m == N):
            checkpoint(m)
            last = time.monotonic()

    if mm is None:
        return TwoSidedTable(checkers, values, scale, code, gammon_checkers=_gammon_checkers)
    crc = _crc_of(mm, HEADER_SIZE, data_size)
    del values
    mm[:HEADER_SIZE] = _pack_header(KIND_TWO_SIDED, 6, checkers, code, T, 0, FLAG_COMPLETE, N,
                                    scale, data_size, N, crc)
    mm.flush()
    mm.close()
    fd = os.open(partial, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, path)
    return open(path, verify=False)


# ------------------------------------------------------------------- opening

def open(path, *, verify: Optional[bool] = None):  # noqa: A001 - syzygy style
    """Open a bear-off database (bgfast format or gnubg's ``.bd``), memory-mapped.

    ``verify``: check the data checksum (default: when the data is at most
    256 MiB, or packed; the header is always checked).  Raises :class:`DatabaseError`
    for a truncated, corrupt or unknown file, or a path that is no file."""
    path = Path(path)
    try:
        fh = builtins_open(path, "rb")
    except FileNotFoundError:
        raise DatabaseError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DatabaseError(f"{path}: is a directory, not a database file") from None
    except OSError as exc:
        raise DatabaseError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with fh:
        head = fh.read(HEADER_SIZE)
        size = os.fstat(fh.fileno()).st_size
        if head.startswith(b"gnubg-"):
            return _open_gnubg(path, fh, head, size)
        h = _parse_header(head, path)
        if size != HEADER_SIZE + h.data_size:
            raise DatabaseError(f"{path}: truncated or padded file ({size} bytes, header says "
                                f"{HEADER_SIZE + h.data_size})")
        if not h.flags & FLAG_COMPLETE:
            done = (f"{h.shells_done} pip groups solved" if h.kind == KIND_ONE_SIDED
                    else f"{h.shells_done} of {h.npos} shells")
            raise DatabaseError(f"{path}: incomplete build ({done}); "
                                "run the build again to resume it")
        mm = mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_READ)
    # packed tables (windows of at most PACK_LIMIT bytes) are always checked
    if verify or (verify is None and (h.data_size <= VERIFY_LIMIT or h.layout == LAYOUT_PACKED)):
        if _crc_of(mm, HEADER_SIZE, h.data_size) != h.data_crc:
            mm.close()
            raise DatabaseError(f"{path}: corrupt data (checksum mismatch)")
    N = h.npos
    if h.kind == KIND_ONE_SIDED:
        off = HEADER_SIZE
        sr = np.frombuffer(mm, np.uint8, N, off)
        sg = np.frombuffer(mm, np.uint8, N, off + N)
        if (sr.max(initial=0) > 255 - h.window) or (sg.max(initial=0) > 255 - h.window):
            raise DatabaseError(f"{path}: corrupt data (window start)")
        if h.layout == LAYOUT_PACKED:
            return _open_packed(path, h, mm, sr, sg)
        off += _pad8(2 * N)
        dr = np.frombuffer(mm, "<f4", N * h.window, off).reshape(N, h.window)
        dg = np.frombuffer(mm, "<f4", N * h.window, off + N * h.window * 4).reshape(N, h.window)
        return OneSidedTable(h.points, h.checkers, sr, dr, sg, dg, path, mm, data_crc=h.data_crc)
    dtype = "<i2" if h.layout == LAYOUT_INT16 else "<f4"
    values = np.frombuffer(mm, dtype, h.ntables * N * N, HEADER_SIZE).reshape(h.ntables, N * N)
    return TwoSidedTable(h.checkers, values, h.scale, h.layout, path, mm)


def _open_packed(path, h: _Header, mm, sr, sg) -> OneSidedTable:
    """A packed one-sided table: its rows memory-mapped, expanded into
    windows when first asked for."""
    N, W = h.npos, h.window
    off = HEADER_SIZE + 2 * N
    lr = np.frombuffer(mm, np.uint8, N, off)
    lg = np.frombuffer(mm, np.uint8, N, off + N)
    nr, ng = int(lr.sum(dtype=np.int64)), int(lg.sum(dtype=np.int64))
    off = HEADER_SIZE + _pad8(4 * N)
    if lr.max(initial=0) > W or lg.max(initial=0) > W or off + 4 * (nr + ng) != HEADER_SIZE + h.data_size:
        raise DatabaseError(f"{path}: corrupt data (packed row lengths)")
    packed = (np.frombuffer(mm, "<f4", nr, off), lr, np.frombuffer(mm, "<f4", ng, off + 4 * nr),
              lg, W)
    return OneSidedTable(h.points, h.checkers, sr, None, sg, None, path, mm,
                          data_crc=h.data_crc, packed=packed)


def _open_gnubg(path, fh, head, size):
    """gnubg's ``.bd`` files: ``gnubg-OS-PP-CC-G-Z-...`` / ``gnubg-TS-PP-CC-F...``."""
    try:
        text = head[:40].decode("ascii")
    except UnicodeDecodeError:
        raise DatabaseError(f"{path}: unreadable gnubg header") from None
    if size < 40 or len(text) < 40:
        raise DatabaseError(f"{path}: truncated gnubg file")
    # gnubg-KK-PP-CC then one-character flags: -G-Z-N (one-sided), -F (two-sided)
    nflags = 3 if text[6:8] == "OS" else 1
    fields = text[:14 + 2 * nflags].split("-")
    if (len(fields) != 4 + nflags or not all(f.isascii() and f.isdigit() for f in fields[2:4])
            or any(f not in ("0", "1") for f in fields[4:])):
        raise DatabaseError(f"{path}: unreadable gnubg header")
    kind = text[6:8]
    points = int(text[9:11])
    checkers = int(text[12:14])
    if kind == "TS":
        if points != 6 or not 1 <= checkers <= 15:
            raise DatabaseError(f"{path}: unsupported gnubg two-sided table {points}x{checkers}")
        cubeful = text[15] == "1"
        T = 4 if cubeful else 1
        N = num_positions(6, checkers)
        if size != 40 + N * N * T * 2:
            raise DatabaseError(f"{path}: truncated gnubg two-sided file")
        mm = mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_READ)
        raw = np.frombuffer(mm, "<u2", N * N * T, 40).reshape(N * N, T)
        # gnubg order: cubeless, owned, centred, opponent owns -> ours
        vals = raw.T[[0, 2, 1, 3]] if cubeful else raw.T
        return TwoSidedTable(checkers, vals, 32767.5, None, path, mm, source="gnubg",
                             gnubg_pairs=True)
    if kind != "OS":
        raise DatabaseError(f"{path}: unknown gnubg database kind {kind!r}")
    if not (1 <= points <= 24 and 1 <= checkers <= 15):
        raise DatabaseError(f"{path}: unsupported gnubg one-sided table {points}x{checkers}")
    gammon = text[15] == "1"
    compressed = text[17] == "1"
    if text[19] == "1":
        raise DatabaseError(f"{path}: gnubg normal-distribution approximations are not supported")
    N = num_positions(points, checkers)
    fh.seek(0)
    data = fh.read()
    W = 32
    sr = np.zeros(N, np.uint8)
    sg = np.zeros(N, np.uint8)
    dr = np.zeros((N, W), np.float32)
    dg = np.zeros((N, W), np.float32)
    if not compressed:
        per = 64 if gammon else 32
        if size != 40 + N * per * 2:
            raise DatabaseError(f"{path}: truncated gnubg one-sided file")
        raw = np.frombuffer(data, "<u2", N * per, 40).reshape(N, per) / 65535.0
        dr[:] = raw[:, :32]
        if gammon:
            dg[:] = raw[:, 32:64]
    else:
        if size < 40 + 8 * N:
            raise DatabaseError(f"{path}: truncated gnubg one-sided file")
        idx = np.frombuffer(data, np.uint8, 8 * N, 40).reshape(N, 8)
        offs = idx[:, :4].copy().view("<u4").ravel().astype(np.int64)
        nz, ioff, nzg, iofg = (idx[:, k].astype(np.int64) for k in (4, 5, 6, 7))
        base = 40 + 8 * N
        vals = np.frombuffer(data, "<u2", (size - base) // 2, base)
        if (offs + nz + (nzg if gammon else 0) > vals.shape[0]).any() \
                or (ioff + nz > 64).any() or (iofg + nzg > 64).any():
            raise DatabaseError(f"{path}: truncated or corrupt gnubg one-sided file")
        probs = vals / 65535.0
        sr[:] = ioff
        dr[:] = _gather_rows(probs, nz, W, offs)
        if gammon:
            sg[:] = iofg
            dg[:] = _gather_rows(probs, nzg, W, offs + nz)
    if not gammon:
        dg[:] = 0.0
        sg[:] = 0
    # the empty position
    dr[0] = 0
    dr[0, 0] = 1.0
    sr[0] = 0
    dg[0] = 0
    dg[0, 0] = 1.0
    sg[0] = 0
    return OneSidedTable(points, checkers, sr, dr, sg, dg, path, None, source="gnubg")


# -------------------------------------------------------------- defaults

def cache_dir(override=None) -> Path:
    """The per-user cache directory: ``override``, ``$BGFAST_CACHE_DIR`` or
    ``~/.cache/bgfast``."""
    if override is not None:
        return Path(override)
    env = os.environ.get("BGFAST_CACHE_DIR")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "bgfast"


_DEFAULTS: dict = {}


def _cached(name, builder, directory):
    # a table already open for the same name, directory and environment is
    # returned without building paths (the analysis asks once per block)
    fast = (name, directory, os.environ.get("BGFAST_CACHE_DIR"), os.environ.get("HOME"))
    t = _DEFAULTS.get(fast)
    if t is not None and t._mmap is not None:
        return t
    d = cache_dir(directory)
    p = d / name
    key = str(p)
    t = _DEFAULTS.get(key)
    if t is not None and t._mmap is not None:
        _DEFAULTS[fast] = t
        return t
    t = _open_if_sound(p)
    if t is None:
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            why = "it is not a directory" if d.is_file() else exc.strerror or exc
            raise OutputPathError(f"cannot use {str(d)!r} as the bear-off cache directory: "
                                  f"{why}") from None
        # processes that start together on a new cache build each table once:
        # the others wait for the lock, then open what the first one built
        with directory_lock(d):
            t = _open_if_sound(p)
            if t is None:
                builder(p)
                t = _open_checked_once(p)
    _DEFAULTS[key] = _DEFAULTS[fast] = t
    return t


def _open_if_sound(p: Path):
    """The cached table at ``p``, or None if there is none or it is corrupt."""
    if not p.exists():
        return None
    try:
        return _open_checked_once(p)
    except DatabaseError:
        return None


def _open_checked_once(p: Path):
    """Open a cached table, checking its data's checksum only until a check
    has passed for the file as it is now: ``FILE.checked`` records its size
    and modification time then (a file rewritten since is checked again).
    The race table's 258 MB are read once, not by every process."""
    stamp = p.with_name(p.name + ".checked")
    st = p.stat()
    now = f"{st.st_size} {st.st_mtime_ns}"
    try:
        checked = stamp.read_text() == now
    except OSError:
        checked = False
    t = open(p, verify=not checked)
    if not checked:
        try:
            atomic_write(stamp, [now.encode()])
        except OSError:             # a read-only cache: check every time
            pass
    return t


def default_one_sided(directory=None) -> OneSidedTable:
    """The 6-point 15-checker one-sided table, built on first use and cached."""
    return _cached(f"bearoff-os-6x15-v{VERSION}.bgb",
                   lambda p: build_one_sided(6, 15, p), directory)


#: the points of the one-sided table that values races for the evaluators
#: (``$BGFAST_RACE_POINTS`` overrides it, 6 to 12)
RACE_TABLE_POINTS = 10


def race_table_points() -> int:
    """The points of the race table :func:`default_race_table` gives:
    ``$BGFAST_RACE_POINTS`` if set, else :data:`RACE_TABLE_POINTS`."""
    env = os.environ.get("BGFAST_RACE_POINTS")
    if env is None or env == "":
        return RACE_TABLE_POINTS
    if not (env.strip().isdigit() and 6 <= int(env) <= 12):
        raise InvalidPositionError(f"BGFAST_RACE_POINTS must be 6 to 12, not {env!r}")
    return int(env)


def default_race_table(directory=None, points=None) -> OneSidedTable:
    """The one-sided 15-checker table whose convolution values every race
    with both sides' checkers within its points (``points``, default
    :func:`race_table_points`; 10 by default: 3.27 M positions a side,
    258 MB, about 10 s to build), built on first use and cached. With 6
    points it is :func:`default_one_sided`."""
    points = race_table_points() if points is None else int(points)
    if not 6 <= points <= 12:
        raise InvalidPositionError(f"a race table has 6 to 12 points, not {points}")
    if points == 6:
        return default_one_sided(directory)
    return _cached(f"bearoff-os-{points}x15-v{VERSION}.bgb",
                   lambda p: build_one_sided(points, 15, p), directory)


def default_two_sided(directory=None) -> TwoSidedTable:
    """The 6x6 two-sided table with cubeful values, built on first use and cached."""
    return _cached(f"bearoff-ts-6x6-cubeful-v{VERSION}.bgb",
                   lambda p: build_two_sided(6, p, cubeful=True), directory)


def probe(position, directory=None) -> ProbeResult:
    """Exact values from the default 6x6 table when both sides have at most 6
    checkers, else race probabilities from the default one-sided table.

    Raises :class:`MissingTableError` outside the home boards."""
    ts = default_two_sided(directory)
    r = ts.get(position)
    if r is not None:
        return r
    return default_one_sided(directory).probe(position)


def get(position, default=None, directory=None):
    """Like :func:`probe`, but ``default`` for positions outside the tables."""
    try:
        return probe(position, directory)
    except MissingTableError:
        return default
