"""Training data for the net: positions from seeded self-play, labelled by rollouts.

Two steps, each a command (``bgfast data positions`` and ``bgfast data label``)::

    from bgfast import traindata
    ps = traindata.sample_positions(200_000, seed=1)         # a PositionSet
    traindata.save_positions(ps, "positions.bgtd")
    traindata.label("positions.bgtd", traindata.LABEL_SETTINGS, "labels/")
    lab = traindata.load_labels("labels/")                   # a LabelSet

**Positions** come from seeded games of several players against themselves
(:data:`DEFAULT_PLAYERS`: the net at 0-ply, the net with equity noise
(``easy``, ``medium``), pubeval, random plays (``beginner``), a few games of
``expert``; ``gnubg`` through the optional gnubg-nn package when asked
for).  The games are played by the duel's game loop
(``bgfast.duel.py_game``) on the duel's dice streams, each player with
seeds of its own.  Every position met after a play (the next player on roll,
before the roll) is kept unless the game is over or the exact two-sided
bear-off table covers it, or it was met before (by any player); each player
gets a share of the ``n`` positions in proportion to its weight.  The set is
shuffled (seeded), so any prefix is a sample of the whole.  Each position
has a class (:func:`classify`): ``contact``, ``crashed`` or ``race``.

**Labels**: each position is rolled out by :func:`bgfast.rollout.rollout`
with the settings given (default :data:`LABEL_SETTINGS`: the net plays and
evaluates, variance reduction, truncation after 11 plies with the net's
evaluation there), position ``i`` with the seed :func:`position_seed`
``(seed, i)``: its label depends on nothing else (not on the job count, the
blocks or the shards).  The labeller writes shards of ``shard_size``
positions and checkpoints the shard being filled at least every
``checkpoint_seconds`` (atomic writes), so that a killed run loses at most
that much work, and a run resumed with ``resume=True`` writes exactly the
files an uninterrupted run writes.

**File format** (``.bgtd``, version :data:`FORMAT_VERSION`, little-endian)::

    0    8s   magic b"BGFTDATA"
    8    u32  header length H
    12   H    header: UTF-8 JSON {"format", "version", "kind", "count",
              "arrays": [[name, dtype, shape], ...], "meta": {...}, "sha256"}
    12+H      the arrays, C order, one after the other

``sha256`` is taken over the header's JSON without it (sorted keys, compact)
followed by the array bytes.  Kind ``positions``: ``key u1[N, 10]``
(:func:`bgfast.pack` position keys), ``cls u1[N]`` (index into
:data:`CLASSES`), ``source u1[N]`` (index into ``meta["players"]``).  Kind
``labels`` (a shard): ``index i8[N]`` (into the positions file), ``key``,
``cls``, ``mean f8[N, 6]`` and ``stderr f8[N, 6]`` (:data:`LABEL_NAMES`: the
five cumulative probabilities and the cubeless equity for the player on
roll, with their standard errors), ``games i4[N]``, ``plies f8[N]`` (mean
plies per trial); ``meta`` holds the rollout settings, the digest of the
positions, the net's checksum, the shard number and first index.  A file
that is truncated, corrupt, of another kind or version, or does not belong
with the others raises :class:`bgfast.errors.DatabaseError`.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import struct
import time
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from . import _net
from ._files import atomic_open, check_writable, read_input
from ._workers import cores, ordered_map
from .errors import BgfastError, DatabaseError, OutputPathError, check_seed
from .evaluate import get_evaluator, race_points
from .position import PositionClass, classify_boards, pack, unpack
from .rollout import OUTPUT_NAMES, RolloutSettings, rollout

__all__ = ["CLASSES", "CONTACT", "CRASHED", "RACE", "CRASHED_IN_PLAY", "DEFAULT_PLAYERS",
           "LABEL_SETTINGS", "LABEL_NAMES", "FORMAT_VERSION", "SUFFIX", "PositionSet", "LabelSet", "KeyedRows",
           "checkers_in_play", "classify", "exact_covered", "derive_seed", "position_seed",
           "sample_positions", "select_classes", "save_positions", "load_positions", "load_keys", "label", "label_values", "value_depths", "load_labels", "concat_labels",
           "label_files", "label_fields", "settings_of_fields", "race_table_fields", "run_shards", "load_shards", "prepare_directory"]

FORMAT_VERSION = 1
MAGIC = b"BGFTDATA"
SUFFIX = ".bgtd"
CLASSES = ("contact", "crashed", "race")
CONTACT, CRASHED, RACE = 0, 1, 2
#: A contact position is ``crashed`` when a side has at most this many
#: checkers in play (:func:`checkers_in_play`); the kernel's rule, by which a
#: net of three evaluates it with its crashed net.
CRASHED_IN_PLAY = _net.CRASHED_IN_PLAY
#: The players of :func:`sample_positions` and their weights (shares of the positions).
DEFAULT_PLAYERS = {"net": 45, "pubeval": 20, "easy": 10, "medium": 10, "beginner": 10,
                   "expert": 5}
#: The labelling setting: the net plays and evaluates, variance reduction,
#: truncated after 11 plies, 72 trials (two blocks of the 36 first rolls).
LABEL_SETTINGS = RolloutSettings(trials=72, truncate=11, seed=1, policy="net", evaluator="net",
                                 variance_reduction=True, luck_plays=0)
LABEL_NAMES = OUTPUT_NAMES
#: The settings fields that make a label (the others only say where it is computed).
_LABEL_FIELDS = ("trials", "seed", "truncate", "variance_reduction", "quasi_random", "early_stop",
                 "policy", "evaluator", "stderr_target", "min_trials", "batch")
_HEAD = struct.Struct("<8sI")
_DTYPES = {"u1", "i4", "i8", "f8"}
_GAMES_PER_BLOCK = 4


# ---------------------------------------------------------------------------
# classes
# ---------------------------------------------------------------------------

def checkers_in_play(boards) -> np.ndarray:
    """Checkers each side still has in play, ``int64[N, 2]`` (rows as in the
    boards: 0 = not on roll, 1 = on roll): the checkers on the board (the bar
    included), less those piled beyond the second on its 1- and 2-points
    together (checkers that can no longer move or make a point)."""
    b = np.asarray(boards, dtype=np.int64)
    if b.ndim == 2:
        b = b[None]
    on_board = b.sum(axis=2)
    deep = b[:, :, 0] + b[:, :, 1]
    return on_board - np.maximum(deep - 2, 0)


def classify(boards) -> np.ndarray:
    """The training class of each board, ``uint8[N]`` (index into :data:`CLASSES`).

    ``race``: no contact (:func:`bgfast.position.classify_boards`; bear-offs
    and finished games included).  ``crashed``: contact, and a side (either)
    has at most :data:`CRASHED_IN_PLAY` checkers in play
    (:func:`checkers_in_play`): most of its checkers are off or dead on its
    deepest points, so its board is breaking.  ``contact``: the rest.
    """
    b = np.asarray(boards)
    if b.ndim == 2:
        b = b[None]
    contact = classify_boards(b) == PositionClass.CONTACT
    crashed = contact & (checkers_in_play(b).min(axis=1) <= CRASHED_IN_PLAY)
    out = np.full(b.shape[0], RACE, dtype=np.uint8)
    out[contact] = CONTACT
    out[crashed] = CRASHED
    return out


def exact_covered(boards) -> np.ndarray:
    """``bool[N]``: finished games and the positions of the exact two-sided
    bear-off table (which need no label)."""
    return get_evaluator("exact").covers(boards)


# ---------------------------------------------------------------------------
# seeds
# ---------------------------------------------------------------------------

def derive_seed(seed: int, *parts) -> int:
    """A 64-bit seed from ``seed`` and ``parts`` (ints or strings): the first
    8 bytes (little-endian) of SHA-256 of their text, so that different
    parts give independent streams."""
    text = ":".join(str(x) for x in (int(seed),) + parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def position_seed(seed: int, index: int) -> int:
    """The rollout seed of position ``index`` in a labelling run of ``seed``."""
    return derive_seed(seed, "position", int(index))


# ---------------------------------------------------------------------------
# the file format
# ---------------------------------------------------------------------------

def _digest(head: dict, arrays: list) -> str:
    h = hashlib.sha256(json.dumps(head, sort_keys=True, separators=(",", ":")).encode())
    for a in arrays:
        h.update(a.tobytes())
    return h.hexdigest()


def _write(path, kind: str, arrays: dict, meta: dict) -> None:
    """Write ``arrays`` (name -> array) and ``meta`` as a ``kind`` file, atomically."""
    arrs = [np.ascontiguousarray(a, dtype=np.dtype(a.dtype).newbyteorder("<")) for a in arrays.values()]
    count = int(arrs[0].shape[0]) if arrs else 0
    head = {"format": "bgfast training data", "version": FORMAT_VERSION, "kind": kind,
            "count": count, "meta": meta,
            "arrays": [[n, a.dtype.str[1:], list(a.shape)] for n, a in zip(arrays, arrs)]}
    head["sha256"] = _digest(head, arrs)
    text = json.dumps(head, sort_keys=True, separators=(",", ":")).encode()
    with atomic_open(path, "wb") as f:
        f.write(_HEAD.pack(MAGIC, len(text)))
        f.write(text)
        for a in arrs:
            f.write(a.tobytes())


def _read(path, kind) -> tuple[dict, dict]:
    """``(arrays, meta)`` of a ``kind`` file (a kind, or a tuple of the kinds
    accepted); :class:`DatabaseError` unless it is intact."""
    name = os.fspath(path)
    data = read_input(name, DatabaseError, binary=True)
    if len(data) < _HEAD.size or data[:8] != MAGIC:
        raise DatabaseError(f"{name} is not a bgfast training data file")
    _, size = _HEAD.unpack_from(data)
    try:
        head = json.loads(data[_HEAD.size:_HEAD.size + size].decode())
        if not isinstance(head, dict):
            raise ValueError("not an object")
        stored = head.pop("sha256")
        version, got, count, meta = head["version"], head["kind"], head["count"], head["meta"]
        specs = [(str(a), str(d), [int(x) for x in sh]) for a, d, sh in head["arrays"]]
        if any(d not in _DTYPES or not sh or sh[0] != count or min(sh) < 0 for _a, d, sh in specs):
            raise ValueError("bad array list")
    except (ValueError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise DatabaseError(f"{name} is corrupt: its header cannot be read ({exc})") from None
    if version != FORMAT_VERSION:
        raise DatabaseError(f"{name} has training data format version {version}; this bgfast "
                            f"reads version {FORMAT_VERSION}")
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    if got not in kinds:
        raise DatabaseError(f"{name} holds {got}, not {' or '.join(kinds)}")
    arrays, offset = {}, _HEAD.size + size
    for aname, dtype, shape in specs:
        dt = np.dtype("<" + dtype)
        nbytes = dt.itemsize * math.prod(shape)
        if offset + nbytes > len(data):
            raise DatabaseError(f"{name} is truncated")
        arrays[aname] = np.frombuffer(data, dt, math.prod(shape), offset).reshape(shape)
        offset += nbytes
    if offset != len(data):
        raise DatabaseError(f"{name} is corrupt: {len(data) - offset} bytes after the data")
    if _digest(head, list(arrays.values())) != stored:
        raise DatabaseError(f"{name} is corrupt: checksum mismatch")
    return arrays, meta


def _require(arrays: dict, names, path) -> None:
    missing = [n for n in names if n not in arrays]
    if missing:
        raise DatabaseError(f"{os.fspath(path)} lacks the arrays {', '.join(missing)}")


# ---------------------------------------------------------------------------
# positions
# ---------------------------------------------------------------------------

class KeyedRows:
    """Rows of positions with their classes (``keys uint8[N, 10]``,
    ``classes uint8[N]``): their number, boards and class counts."""

    keys: np.ndarray
    classes: np.ndarray

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    @property
    def boards(self) -> np.ndarray:
        return unpack(self.keys)

    def class_counts(self) -> dict:
        c = np.bincount(self.classes, minlength=len(CLASSES))
        return {name: int(c[i]) for i, name in enumerate(CLASSES)}


@dataclass
class PositionSet(KeyedRows):
    """Positions to label: ``keys uint8[N, 10]`` (:func:`bgfast.pack`),
    ``classes uint8[N]`` (:data:`CLASSES`), ``sources uint8[N]`` (index into
    ``players``, the ``(name, weight)`` pairs that made them) and ``meta``
    (how they were made)."""

    keys: np.ndarray
    classes: np.ndarray
    sources: np.ndarray
    players: tuple
    meta: dict = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """SHA-256 of the keys in order: the identity the labels refer to."""
        return hashlib.sha256(np.ascontiguousarray(self.keys, dtype=np.uint8).tobytes()).hexdigest()

    def source_counts(self) -> dict:
        c = np.bincount(self.sources, minlength=len(self.players))
        return {name: int(c[i]) for i, (name, _w) in enumerate(self.players)}


def _parse_players(players) -> tuple:
    """``(name, weight)`` pairs from a dict, a list of names or pairs, or a
    text ``name=weight,name,...``."""
    if players is None:
        players = DEFAULT_PLAYERS
    if isinstance(players, str):
        items = []
        for part in players.split(","):
            name, _, w = part.strip().partition("=")
            try:
                items.append((name.strip(), float(w) if w.strip() else 1.0))
            except ValueError:
                raise BgfastError(f"bad weight in players {part.strip()!r}") from None
        players = items
    elif isinstance(players, dict):
        players = list(players.items())
    else:
        players = [(p, 1.0) if isinstance(p, str) else tuple(p) for p in players]
    out, names = [], set()
    for name, w in players:
        key = str(name).strip().lower()
        if not key:
            raise BgfastError("a player has no name")
        if key in names:
            raise BgfastError(f"player {key!r} is given twice")
        if not (isinstance(w, (int, float)) and math.isfinite(w) and w >= 0):
            raise BgfastError(f"the weight of player {key!r} must be a number >= 0")
        names.add(key)
        out.append((key, float(w)))
    if not out or sum(w for _n, w in out) <= 0:
        raise BgfastError("no player has a positive weight")
    if len(out) > 255:
        raise BgfastError("at most 255 players")
    return tuple(out)


def _quotas(n: int, players: tuple) -> list[int]:
    """``n`` split in proportion to the weights (largest remainders, ties to the first)."""
    total = sum(w for _n, w in players)
    exact = [n * w / total for _n, w in players]
    q = [int(math.floor(x)) for x in exact]
    order = sorted(range(len(q)), key=lambda i: (-(exact[i] - q[i]), i))
    for i in order[:n - sum(q)]:
        q[i] += 1
    return q


_PLAYERS: dict = {}


def _game_player(name: str):
    """The duel player of ``name``, made once per process."""
    p = _PLAYERS.get(name)
    if p is None:
        from .duel import PeerPlayer, PyLevelPlayer, get_player

        p = get_player(name)
        if not isinstance(p, PeerPlayer):
            p = PyLevelPlayer(p)
        _PLAYERS[name] = p
    return p


def _play_games(block, _args) -> np.ndarray:
    """The boards met in games ``first .. first + count - 1`` of a player:
    ``uint8[M, 2, 25]``, in game and play order."""
    from .duel import py_game

    name, seed, first, count = block
    player = _game_player(name)
    boards: list = []
    for game in range(first, first + count):
        py_game([player, player], seed, game, 0, record=boards)
    if not boards:
        return np.zeros((0, 2, 25), dtype=np.uint8)
    return np.ascontiguousarray(np.stack(boards), dtype=np.uint8)


def _jobs(jobs) -> int:
    """Processes to use: ``jobs``, or every core when None."""
    if jobs is None:
        return cores()
    if int(jobs) < 1:
        raise BgfastError("jobs must be at least 1")
    return int(jobs)


def sample_positions(n: int, seed: int = 0, players=None, *, jobs: int | None = None,
                     exclude=None, classes=None, bearoffs: bool = True, pool: int | None = None,
                     progress: Callable | None = None) -> PositionSet:
    """``n`` distinct positions from seeded self-play (see the module).

    ``players``: names of :func:`bgfast.duel.get_player` with weights (a
    dict, a list, or ``"net=45,pubeval=20,..."``; default
    :data:`DEFAULT_PLAYERS`); ``gnubg`` needs the optional gnubg-nn package.
    ``exclude``: position keys (``uint8[M, 10]`` or a :class:`PositionSet`)
    that are not to be taken (for example a held-out set).  ``classes``:
    names of :data:`CLASSES`; only positions of these classes are taken
    (default all).  ``bearoffs=False`` leaves out the bear-offs (every
    checker of both sides in its home board), which the evaluators value by
    their tables; each player still plays its share of the games.  ``jobs``:
    processes (default every core; the result does not depend on it).
    ``pool``: find this many distinct positions (at least ``n``) and keep a
    seeded random ``n`` of them, so that the positions come from ``pool / n``
    times as many games (a game gives dozens of alike positions); each
    player's share is its weight on average.  ``progress(done, pool or n)`` is called
    as positions are found.
    """
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise BgfastError("the number of positions must be at least 1")
    check_seed(seed)
    if pool is not None and (not isinstance(pool, (int, np.integer)) or pool < n):
        raise BgfastError(f"the pool must be a whole number of at least n = {n} positions")
    find = int(n if pool is None else pool)
    plist = _parse_players(players)
    jobs = _jobs(jobs)
    wanted = _class_mask(classes)
    for name, _w in plist:
        _game_player(name)                  # unknown names, a missing gnubg-nn: before any work
    seen: set = set()
    if exclude is not None:
        ex = exclude.keys if isinstance(exclude, PositionSet) else np.asarray(exclude, dtype=np.uint8)
        if ex.ndim != 2 or ex.shape[1] != 10:
            raise BgfastError(f"exclude must be position keys of shape (M, 10), not {ex.shape}")
        seen.update(bytes(k) for k in ex)
    keys: list = []
    sources: list = []
    games_played = {}
    for pi, ((name, _w), quota) in enumerate(zip(plist, _quotas(find, plist))):
        if quota == 0:
            games_played[name] = 0
            continue
        gseed = derive_seed(seed, "games", name)
        limit = 20 * quota + 1000           # every real game gives dozens of positions
        blocks = ((name, gseed, first, _GAMES_PER_BLOCK)
                  for first in range(0, limit, _GAMES_PER_BLOCK))
        got, games = 0, 0
        # a small window: the blocks read ahead of the quota are played for nothing
        stream = ordered_map(_play_games, blocks, None, jobs, window=max(2, 2 * jobs))
        try:
            for boards in stream:
                games += _GAMES_PER_BLOCK
                keep = ~exact_covered(boards) & wanted[classify(boards)]
                if not bearoffs:
                    keep &= classify_boards(boards) != PositionClass.BEAROFF
                for k in pack(boards[keep]):
                    kb = k.tobytes()
                    if kb in seen:
                        continue
                    seen.add(kb)
                    keys.append(kb)
                    sources.append(pi)
                    got += 1
                    if got == quota:
                        break
                if progress:
                    progress(len(keys), find)
                if got == quota:
                    break
        finally:
            stream.close()
        if got < quota:
            raise BgfastError(f"player {name!r} found only {got} new positions in {games} games")
        games_played[name] = games
    karr = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, 10)
    order = np.random.default_rng(derive_seed(seed, "shuffle")).permutation(len(keys))[:int(n)]
    karr = np.ascontiguousarray(karr[order])
    src = np.asarray(sources, dtype=np.uint8)[order]
    meta = {"n": int(n), "seed": int(seed), "players": [list(p) for p in plist],
            **({} if pool is None else {"pool": find}),
            **({} if classes is None else {"classes": [CLASSES[i] for i in np.flatnonzero(wanted)]}),
            **({} if bearoffs else {"bearoffs": False}),
            "games": games_played, "excluded_keys": 0 if exclude is None else len(seen) - len(keys),
            "crashed_in_play": CRASHED_IN_PLAY, "games_per_block": _GAMES_PER_BLOCK}
    return PositionSet(karr, classify(unpack(karr)), src, plist, meta)


def _class_mask(classes) -> np.ndarray:
    """``bool[len(CLASSES)]``: the classes named (all for None)."""
    if classes is None:
        return np.ones(len(CLASSES), dtype=bool)
    names = [classes] if isinstance(classes, str) else list(classes)
    for c in names:
        if c not in CLASSES:
            raise BgfastError(f"unknown position class {c!r}; the classes are {', '.join(CLASSES)}")
    if not names:
        raise BgfastError("no position class named")
    return np.isin(np.arange(len(CLASSES)), [CLASSES.index(c) for c in names])


def select_classes(ps: PositionSet, classes=None) -> PositionSet:
    """The positions of ``ps`` of the classes named (:data:`CLASSES`; all
    for None), in their order: a set of their own, whose digest the labels
    made from it record (position ``i`` of a rollout labelling is then the
    ``i``-th selected one).  Raises :class:`BgfastError` for an unknown
    class or an empty list."""
    wanted = _class_mask(classes)
    if wanted.all():
        return ps
    rows = np.flatnonzero(wanted[ps.classes])
    meta = dict(ps.meta, selected=[c for c, w in zip(CLASSES, wanted) if w])
    return PositionSet(keys=ps.keys[rows], classes=ps.classes[rows], sources=ps.sources[rows],
                       players=ps.players, meta=meta)


def save_positions(ps: PositionSet, path) -> None:
    """Write a :class:`PositionSet` (kind ``positions``), atomically."""
    _write(path, "positions", {"key": ps.keys, "cls": ps.classes, "source": ps.sources},
           {**ps.meta, "players": [list(p) for p in ps.players], "digest": ps.digest})


def load_keys(path) -> np.ndarray:
    """The position keys (``uint8[N, 10]``) of a positions file or of a
    benchmark's decisions file, for ``exclude``."""
    arrays, _meta = _read(path, ("positions", "benchmark-decisions"))
    _require(arrays, ("key",), path)
    return np.ascontiguousarray(arrays["key"].reshape(-1, 10))


def load_positions(path) -> PositionSet:
    """Read a positions file; :class:`DatabaseError` unless it is intact."""
    arrays, meta = _read(path, "positions")
    _require(arrays, ("key", "cls", "source"), path)
    try:
        players = tuple((str(n), float(w)) for n, w in meta["players"])
    except (KeyError, TypeError, ValueError):
        raise DatabaseError(f"{os.fspath(path)} is corrupt: no player list") from None
    return PositionSet(arrays["key"].reshape(-1, 10), arrays["cls"], arrays["source"], players,
                       meta)


# ---------------------------------------------------------------------------
# labels
# ---------------------------------------------------------------------------

@dataclass
class LabelSet(KeyedRows):
    """Labelled positions: ``index`` (into the positions), ``keys``,
    ``classes``, ``mean`` and ``stderr`` (``float64[N, 6]``, columns
    :data:`LABEL_NAMES`), ``games``, ``plies``; ``meta`` the settings."""

    index: np.ndarray
    keys: np.ndarray
    classes: np.ndarray
    mean: np.ndarray
    stderr: np.ndarray
    games: np.ndarray
    plies: np.ndarray
    meta: dict = field(default_factory=dict)

    @property
    def probs(self) -> np.ndarray:
        return self.mean[:, :5]

    @property
    def equity(self) -> np.ndarray:
        return self.mean[:, 5]


_LABEL_ARRAYS = ("index", "key", "cls", "mean", "stderr", "games", "plies")
_SHARD_RE = re.compile(r"^shard-(\d{6})" + re.escape(SUFFIX) + "$")
PARTIAL = "partial" + SUFFIX


def label_fields(settings: RolloutSettings) -> dict:
    """The fields of ``settings`` that make a label (recorded in every shard):
    those of ``_LABEL_FIELDS``, and ``luck_plays`` when the luck plays are
    pruned (a record without it means every play, as
    :func:`settings_of_fields` reads it)."""
    d = settings.to_dict()
    out = {k: d[k] for k in _LABEL_FIELDS}
    if d["luck_plays"]:
        out["luck_plays"] = d["luck_plays"]
    return out


def settings_of_fields(fields: dict) -> RolloutSettings:
    """The rollout settings that :func:`label_fields` recorded as ``fields``."""
    return RolloutSettings(**{"luck_plays": 0, **fields})


def _shard_name(k: int) -> str:
    return f"shard-{k:06d}{SUFFIX}"


def label_files(directory) -> tuple[list, Path | None]:
    """The shard files of a labels directory in order, and its partial
    shard (None if there is none)."""
    d = Path(directory)
    if not d.is_dir():
        return [], None
    shards = sorted(p for p in d.iterdir() if _SHARD_RE.match(p.name))
    partial = d / PARTIAL
    return shards, partial if partial.exists() else None


#: identity fields that older files lack, and the value they were made with
_LEGACY_FIELDS = {"race_points": 6, "search": 1}


def _meta_field(meta: dict, k: str):
    """A file's identity field ``k`` (:data:`_LEGACY_FIELDS` where it has none)."""
    return meta.get(k, _LEGACY_FIELDS.get(k))


def _read_shard(path, expect: dict | None = None, kind: str = "labels",
                names: tuple = _LABEL_ARRAYS) -> tuple[dict, dict]:
    arrays, meta = _read(path, kind)
    _require(arrays, names, path)
    if expect is not None:
        for k, v in expect.items():
            if _meta_field(meta, k) != v:
                raise DatabaseError(f"{os.fspath(path)} does not belong with this run: its {k} "
                                    f"is {_meta_field(meta, k)!r}, not {v!r}")
    return arrays, meta


def _net_checksum() -> str:
    """The checksum of the shipped net (which the net levels and evaluator use)."""
    from .net import checksum, default_net

    return checksum(**default_net().arrays())


def _label_block(block, args) -> tuple:
    """Roll out positions ``start ..`` of a block: ``(mean, stderr, games, plies)``."""
    start, keys = block
    s = RolloutSettings(**args)
    n = keys.shape[0]
    mean = np.empty((n, 6))
    se = np.empty((n, 6))
    games = np.empty(n, dtype=np.int32)
    plies = np.empty(n)
    for i, board in enumerate(unpack(keys)):
        r = rollout(board, replace(s, seed=position_seed(s.seed, start + i)))
        mean[i] = [r.mean[k] for k in OUTPUT_NAMES]
        se[i] = [r.stderr[k] for k in OUTPUT_NAMES]
        games[i] = r.games
        plies[i] = r.average_plies
    return mean, se, games, plies


def _rows(parts: list, names: tuple = _LABEL_ARRAYS) -> dict:
    """Concatenate row groups (tuples of arrays in the order of ``names``)."""
    return {name: np.concatenate([p[j] for p in parts]) for j, name in enumerate(names)}


def label(positions, settings: RolloutSettings | None = None, out="labels", *,
          resume: bool = False, jobs: int | None = None, limit: int | None = None,
          shard_size: int = 4096, block_size: int = 8, checkpoint_seconds: float = 60.0,
          progress: Callable | None = None) -> dict:
    """Roll out positions ``0 .. limit - 1`` of ``positions`` (a positions
    file or a :class:`PositionSet`) into the directory ``out`` (see the module).

    ``settings``: the rollout setting (default :data:`LABEL_SETTINGS`; its
    ``jobs``/``backend`` are ignored: each position is rolled out in one
    process, ``jobs`` processes at a time, default every core).  Shards of
    ``shard_size`` positions are written as they fill, the one being filled
    (``partial.bgtd``) at least every ``checkpoint_seconds``.  ``resume``:
    continue the run in ``out`` (its shards must have been made with the
    same positions, setting, net and shard size); without it ``out`` must
    hold no labels.  ``progress(done, total)`` is called as positions are
    labelled.  Returns a summary (positions labelled, in this call, seconds).
    """
    s = settings or LABEL_SETTINGS
    if s.cube is not None:
        raise BgfastError("labels are cubeless rollouts")
    args = {k: v for k, v in s.to_dict().items() if k != "cube"}
    args.update(jobs=1, backend="serial")
    return _label_run(positions, label_fields(s), _label_block, args, out, resume=resume,
                      jobs=jobs, limit=limit, shard_size=shard_size, block_size=block_size,
                      checkpoint_seconds=checkpoint_seconds, progress=progress)


def _label_run(positions, fields: dict, work: Callable, args, out, *, resume: bool,
               jobs: int | None, limit: int | None, shard_size: int, block_size: int,
               checkpoint_seconds: float, progress: Callable | None) -> dict:
    """The labels of positions ``0 .. limit - 1`` of ``positions`` (a file or
    a :class:`PositionSet`) into ``out`` by :func:`run_shards`:
    ``work(block, args)`` gives a block's ``(mean, stderr, games, plies)``;
    the shards record ``fields`` as their settings, with the positions'
    digest, the net's checksum and the bgfast version."""
    from . import __version__

    if limit is not None and int(limit) < 0:
        raise BgfastError("limit must be >= 0")
    ps = positions if isinstance(positions, PositionSet) else load_positions(positions)
    total = len(ps) if limit is None else min(int(limit), len(ps))
    from .net import SEARCH_VERSION

    expect = {"settings": fields, "positions": ps.digest, "net": _net_checksum(),
              "race_points": race_points(), "search": SEARCH_VERSION, "bgfast": __version__}

    def rows_of(a, result):
        mean, se, games, plies = result
        n = mean.shape[0]
        return (np.arange(a, a + n, dtype=np.int64), ps.keys[a:a + n], ps.classes[a:a + n],
                mean, se, games, plies)

    r = run_shards(out, "labels", _LABEL_ARRAYS, expect, len(ps), total, work, args,
                   lambda a, b: (a, ps.keys[a:b]), rows_of, resume=resume, jobs=jobs,
                   shard_size=shard_size, block_size=block_size,
                   checkpoint_seconds=checkpoint_seconds, progress=progress)
    return {"positions": r["rows"], "labelled": r["computed"], "shards": r["shards"],
            "seconds": r["seconds"], "out": r["out"]}


_RACE_TABLES: dict = {}      # path -> the one-sided table a value worker has opened


def _race_table(path):
    """The one-sided 15-checker table at ``path`` (:func:`bgfast.bearoff.open`),
    opened once per process."""
    from . import bearoff

    key = os.fspath(path)
    t = _RACE_TABLES.get(key)
    if t is None:
        t = bearoff.open(key)
        if t.kind != "one-sided" or t.checkers != 15:
            raise BgfastError(f"{key} is not a one-sided 15-checker table "
                              f"({t.describe()}): it cannot value races")
        _RACE_TABLES[key] = t
    return t


def race_table_fields(path) -> dict:
    """What identifies a race table in the values' settings: its size and
    its data checksum."""
    t = _race_table(path)
    crc = t.data_crc
    if crc is None:                     # a gnubg file: the checksum of the whole file
        crc = 0
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 24), b""):
                crc = zlib.crc32(chunk, crc)
    return {"points": t.points, "checkers": t.checkers, "crc": crc & 0xFFFFFFFF}


def _value_block(block, args) -> tuple:
    """The net's values of positions ``start ..`` of a block, as label rows
    ``(mean, stderr, games, plies)`` (no sampling: zero standard errors, no
    games); ``args``: ``(depths, race table path or None)``, the value being
    the mean of the probabilities at each look-ahead of ``depths``.  Races
    inside the race table that are not bear-offs of both sides get the
    table's probabilities instead."""
    from .evaluate import equity
    from .net import default_net

    depths, table = args
    _start, keys = block
    boards = np.ascontiguousarray(unpack(keys))

    def net_values(b):
        return sum(default_net().evaluate_plies(b, d) for d in depths) / len(depths)

    if table is None:
        p = net_values(boards)
    else:
        r = _race_table(table).probe_batch(boards)
        inside = r["inside"] & (classify_boards(boards) != PositionClass.BEAROFF)
        p = r["probs"]
        p[~inside] = net_values(np.ascontiguousarray(boards[~inside]))
    n = p.shape[0]
    return (np.concatenate([p, equity(p)[:, None]], axis=1), np.zeros((n, 6)),
            np.zeros(n, dtype=np.int32), np.zeros(n))


def value_depths(plies) -> tuple:
    """The look-ahead depths of :func:`label_values` as a sorted tuple: one
    depth (an int) or several distinct ones, each 1, 2 or 3."""
    depths = (plies,) if isinstance(plies, (int, np.integer)) else tuple(plies)
    if (not depths or len(set(depths)) != len(depths)
            or not all(isinstance(d, (int, np.integer)) and 1 <= d <= 3 for d in depths)):
        raise BgfastError(f"plies must be 1, 2 or 3, or distinct ones of them, not {plies!r}")
    return tuple(sorted(int(d) for d in depths))


def label_values(positions, plies=1, out="values", *, race_table=None,
                 resume: bool = False, jobs: int | None = None, limit: int | None = None,
                 shard_size: int = 4096, block_size: int = 256, checkpoint_seconds: float = 60.0,
                 progress: Callable | None = None) -> dict:
    """Label positions ``0 .. limit - 1`` of ``positions`` with the net's own
    ``plies``-ply values (:meth:`bgfast.net.Net.evaluate_plies`, the bear-off
    tables included) instead of rollouts: the targets of training a net
    towards its look-ahead, which makes its values consistent from one roll
    to the next (what the luck adjustment of rollouts subtracts).  The net is
    :func:`bgfast.net.default_net` (``$BGFAST_NET`` selects a weights file),
    recorded by its checksum.  The files, shards, resume and summary are
    those of :func:`label`; the standard errors, games and plies are zero.

    ``plies``: one look-ahead (1, 2 or 3), or several, such as ``(1, 2)``,
    whose probabilities are averaged.  A net's values at odd and at even
    look-aheads lean opposite ways when it misjudges the side on roll (the
    leaves of an odd look-ahead have the other side on roll), so targets
    that average an odd and an even one do not keep that lean
    (docs/training.md, "The side on roll at odd and even plies").

    ``race_table``: the path of a one-sided 15-checker table (``bgfast
    bearoff build --one-sided P``, or gnubg's).  The races it holds (every
    checker of both sides within its ``P`` points, not every one home) are
    valued by its convolution (:meth:`bgfast.bearoff.OneSidedTable.probe_batch`)
    instead of the net: targets that a race net learns the end of the race
    from.  The table's size and checksum are recorded with the values."""
    depths = value_depths(plies)
    fields = {"values": "net", "plies": depths[0] if len(depths) == 1 else list(depths)}
    if race_table is not None:
        race_table = os.path.abspath(os.fspath(race_table))
        fields["race_table"] = race_table_fields(race_table)
    return _label_run(positions, fields, _value_block,
                      (depths, race_table), out, resume=resume, jobs=jobs, limit=limit,
                      shard_size=shard_size, block_size=block_size,
                      checkpoint_seconds=checkpoint_seconds, progress=progress)


def prepare_directory(out, what: str, resume: bool = True) -> Path:
    """The output directory ``out`` of a sharded run (made if its parent
    exists), checked writable before any work; ``what`` names the contents
    in the errors.  Without ``resume`` it must hold no shards yet."""
    if not str(os.fspath(out)).strip():
        raise OutputPathError(f"no directory given for {what}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputPathError(f"cannot write {what} to {out}: it is not a directory")
    if not out.exists():
        if not out.parent.is_dir():
            raise OutputPathError(f"cannot write {what} to {out}: the directory {out.parent} "
                                  "does not exist")
        try:
            out.mkdir()
        except OSError as exc:
            raise OutputPathError(f"cannot write {what} to {out}: "
                                  f"{exc.strerror or exc}") from None
    check_writable(out / PARTIAL)
    shards, partial = label_files(out)
    if (shards or partial) and not resume:
        raise BgfastError(f"{out} already holds {what}; give resume (--resume) to continue them, "
                          "or choose another directory")
    return out


def run_shards(out, kind: str, names: tuple, expect: dict, count: int, total: int,
               work: Callable, args, block_of: Callable, rows_of: Callable, *,
               resume: bool = False, jobs: int | None = None, shard_size: int = 4096,
               block_size: int = 8, checkpoint_seconds: float = 60.0,
               progress: Callable | None = None, what: str = "labels") -> dict:
    """Compute rows ``0 .. total - 1`` of ``count`` into shard files of kind
    ``kind`` in the directory ``out``, resumable (the engine of :func:`label`).

    Row ``i``'s values depend on ``i`` alone: ``work(block_of(a, b), args)``
    computes rows ``a .. b - 1`` (in ``jobs`` processes, in order) and
    ``rows_of(a, result)`` gives their arrays, a tuple in the order of
    ``names`` (the first, ``index``).  Every shard records ``expect`` (and
    its number and first row); with ``resume`` the run continues the shards
    in ``out`` (which must have been written with the same ``expect``),
    without it ``out`` must hold none.  Shards of ``shard_size`` rows are
    written as they fill, the one being filled (``partial.bgtd``) at least
    every ``checkpoint_seconds`` and when the run stops; a resumed run writes
    exactly the files an uninterrupted one writes.  ``progress(done,
    total)`` is called as rows come in.  Returns a summary."""
    from ._workers import ordered_map

    if shard_size < 1 or block_size < 1:
        raise BgfastError("shard_size and block_size must be at least 1")
    if checkpoint_seconds <= 0:
        raise BgfastError("checkpoint_seconds must be positive")
    out = prepare_directory(out, what, resume)
    expect = {**expect, "shard_size": shard_size}
    shards, partial = label_files(out)
    # the finished shards: 0 .. k-1, complete and consistent
    for k, p in enumerate(shards):
        if p.name != _shard_name(k):
            raise DatabaseError(f"{out}: shard {_shard_name(k)} is missing (found {p.name})")
        _a, meta = _read_shard(p, expect, kind, names)
        n_rows = _a[names[0]].shape[0]
        if meta.get("shard") != k or meta.get("start") != k * shard_size or (
                n_rows != shard_size and (k != len(shards) - 1 or k * shard_size + n_rows != count)):
            raise DatabaseError(f"{p} is not shard {k} of {shard_size} rows")
    done = min(len(shards) * shard_size, count)
    parts: list = []
    if partial is not None:
        a, meta = _read_shard(partial, expect, kind, names)
        if meta.get("start") == done and meta.get("shard") == len(shards):
            parts.append(tuple(np.array(a[n]) for n in names))
            done += a[names[0]].shape[0]
        elif meta.get("start", -1) < done:       # its shard was written: a stale copy
            partial.unlink()
        else:
            raise DatabaseError(f"{partial} starts at row {meta.get('start')}, not {done}")
    start0 = done
    t0 = time.monotonic()
    if progress:
        progress(min(done, total), total)
    if done >= total:
        return {"rows": total, "computed": 0, "shards": len(label_files(out)[0]),
                "seconds": 0.0, "out": str(out)}
    blocks = (block_of(a, b) for a, b in _blocks(done, total, block_size, shard_size))
    shard = len(shards)
    last_ck = time.monotonic()
    fresh = False          # rows in parts that the partial shard does not hold yet

    def write(path):
        _write(path, kind, _rows(parts, names), {**expect, "shard": shard, "start": shard * shard_size})

    stream = ordered_map(work, blocks, args, _jobs(jobs))
    try:
        a = done
        for result in stream:
            rows = rows_of(a, result)
            parts.append(rows)
            fresh = True
            a += rows[0].shape[0]
            if a % shard_size == 0 or a == count:
                write(out / _shard_name(shard))
                try:
                    (out / PARTIAL).unlink()
                except FileNotFoundError:
                    pass
                parts, shard, fresh = [], shard + 1, False
                last_ck = time.monotonic()
            elif time.monotonic() - last_ck >= checkpoint_seconds:
                write(out / PARTIAL)
                fresh, last_ck = False, time.monotonic()
            if progress:
                progress(a, total)
    finally:
        stream.close()
        if fresh:          # the limit inside a shard, or an interruption: keep the rows
            write(out / PARTIAL)
    return {"rows": total, "computed": total - start0, "shards": shard,
            "seconds": round(time.monotonic() - t0, 1), "out": str(out)}


def _blocks(done: int, total: int, block: int, shard: int):
    """The ranges ``(a, b)`` of the blocks from ``done`` to ``total``; no
    block crosses a shard boundary."""
    a = done
    while a < total:
        b = min(a + block, total, (a // shard + 1) * shard)
        yield a, b
        a = b


def load_shards(directory, kind: str = "labels", names: tuple = _LABEL_ARRAYS,
                identity: tuple = ("settings", "positions", "net", "race_points", "search",
                                   "shard_size"), *,
                partial: bool = True, what: str = "labels") -> tuple[dict, dict]:
    """The rows of every shard of a directory written by :func:`run_shards`
    (with ``partial``, also the shard being filled), in order, and the meta
    fields ``identity`` they share: ``(arrays, meta)``."""
    shards, part = label_files(directory)
    files = shards + ([part] if partial and part is not None else [])
    if not files:
        raise DatabaseError(f"{os.fspath(directory)} holds no {what}")
    parts, meta0 = [], None
    for p in files:
        a, meta = _read_shard(p, None, kind, names)
        key = {k: _meta_field(meta, k) for k in identity}
        if meta0 is None:
            meta0 = key
        elif key != meta0:
            raise DatabaseError(f"{p} does not belong with the other shards of {os.fspath(directory)}")
        parts.append(tuple(a[n] for n in names))
    rows = _rows(parts, names)
    if (np.diff(rows["index"]) != 1).any() or rows["index"][0] != 0:
        raise DatabaseError(f"{os.fspath(directory)}: the shards do not follow each other")
    return rows, meta0


def concat_labels(sets) -> LabelSet:
    """One :class:`LabelSet` of several (directories or sets), in the order
    given: for training on labels made at different settings or from
    different positions files.  ``index`` stays each position's index in its
    own positions file; ``meta["parts"]`` holds the parts' ``meta``."""
    parts = [s if isinstance(s, LabelSet) else load_labels(s) for s in sets]
    if not parts:
        raise BgfastError("no labels given")
    if len(parts) == 1:
        return parts[0]
    cat = {name: np.concatenate([getattr(p, name) for p in parts])
           for name in ("index", "keys", "classes", "mean", "stderr", "games", "plies")}
    return LabelSet(**cat, meta={"parts": [p.meta for p in parts]})


def load_labels(directory, *, partial: bool = True) -> LabelSet:
    """Every labelled position of a labels directory, in position order
    (with ``partial``, also the shard being filled)."""
    rows, meta0 = load_shards(directory, partial=partial)
    return LabelSet(rows["index"], rows["key"].reshape(-1, 10), rows["cls"], rows["mean"].reshape(-1, 6),
                    rows["stderr"].reshape(-1, 6), rows["games"], rows["plies"], meta0)
