"""The neural-net evaluator: weights files and the evaluator object.

The net (see ``bgfast._net``) has TD-Gammon style inputs, 98 per side (the
player on roll first): for each of the 24 points 4 units (n >= 1, n >= 2,
n >= 3, (n - 3) / 2 above 3), the bar (n / 2) and the borne-off checkers
(n / 15); then 10 hand-made contact features, 5 per side (on-roll side
first): shots (the rolls of the other side that hit a blot), the rolls that
leave the rearmost checker trapped, the longest prime, the rearmost checker's distance, and
the chance of dancing from the bar (exact definitions in ``bgfast._net``,
values from :func:`features`) -- layout name :data:`LAYOUT`.  A net may
add optional feature groups (:data:`GROUPS`: containment, break-contact
pips, anchors, pip loss of hits, mobility, 2 or 3 inputs per side each;
the checkers borne off as a thermometer, 14 per side, which the kernel
folds into its slot tables at no cost per evaluation), after the base
features; its layout name is :data:`LAYOUT` followed by
``+NAME`` per group (:func:`layout_of`), and :func:`widen` adds groups to
a net with zero weights.  One sigmoid hidden layer and 5
sigmoid outputs: the cumulative probabilities ``(win, win gammon, win
backgammon, lose gammon, lose backgammon)`` for the player on roll.  There
are two nets of the same shape, one for contact and one for race positions,
or three: a third for crashed contact positions (a side with at most
:data:`bgfast._net.CRASHED_IN_PLAY` checkers in play, as
:func:`bgfast.traindata.classify` has it; :func:`add_crashed`), or six:
the other contact positions then split by the race into four plan bands of
the on-roll side's lead in pips (the edges :data:`bgfast._net.PLAN_EDGES`),
each with its own net (:func:`add_plan`; :data:`NET_NAMES`), or seven:
the crashed positions then split by the side crashed, the side on roll
(the crashed net) or its opponent alone (crashed-other, :func:`add_sides`);
bear-off positions use the exact bear-off databases.

Weights file (numpy ``.npz``)::

    format_version  int      FORMAT_VERSION
    layout          str      layout_of(groups): LAYOUT, then "+NAME" per feature group
    w1 float32[N, 196 + F, H]  b1 float32[N, H]  w2 float32[N, H, 5]  b2 float32[N, 5]
                    N = 2 nets (contact, race), 3 (contact, race, crashed), 6 (and plan nets)
                        or 7 (and crashed-other)
    checksum        str      sha256 of the four arrays (see :func:`checksum`)
    meta            str      JSON: how the weights were made (training state)

:func:`load` raises :class:`NetFileError` (a :class:`bgfast.errors.DatabaseError`)
for a missing, truncated, corrupt or mismatched file.  A file of the
previous layout (:data:`PREVIOUS_LAYOUT`, the raw inputs only) is read only
with ``previous=True``: its net gets zero weights on the features, so it
evaluates exactly as before (the start of training with the features).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from importlib import resources
from pathlib import Path

import numpy as np

from . import _net
from ._files import atomic_open
from .errors import BgfastError, DatabaseError
from ._evaluator import Evaluator, boards_and_dice, ensure_tables
from .movegen import _kernel_failure
from .position import as_boards

__all__ = ["FORMAT_VERSION", "LAYOUT", "PREVIOUS_LAYOUT", "INPUTS", "NetFileError", "Net",
           "NetEvaluator", "load", "save", "default_net", "default_weights_path", "checksum", "WEIGHTS_ENV",
           "random_net", "features", "FEATURE_NAMES", "GROUPS", "group_mask", "group_names",
           "layout_of", "group_rows", "input_names", "widen", "add_hidden", "add_crashed", "add_plan", "add_sides",
           "MAX_HIDDEN", "NET_NAMES", "PLAN_NETS", "SIDE_NETS", "SEARCH_VERSION"]

FORMAT_VERSION = 1
#: The version of the kernel's n-ply search, which labels and values record
#: beside the net (2: the search looks past the one-sided race table's
#: values and stops only at the two-sided table's exact ones; files without
#: the field were made with version 1, which stopped at both).
SEARCH_VERSION = 2
#: The most hidden units a net may have (the kernel's limit).
MAX_HIDDEN = _net.MAX_HIDDEN
#: The kernel nets of a weights set, by index (a set of two has the first two,
#: of three the first three).  In a set of six or seven the contact net values
#: the contact positions whose side on roll trails by more than -PLAN_EDGES[0]
#: pips, and the three plan nets those from each edge of PLAN_EDGES on.  In a
#: set of seven the crashed net values the crashed positions whose side on roll
#: is crashed, and crashed-other those where only its opponent is.
NET_NAMES = ("contact", "race", "crashed", "contact-behind", "contact-even", "contact-ahead",
             "crashed-other")
#: The nets of a set with plan nets.
PLAN_NETS = _net.PLAN_NETS
#: The nets of a set with plan nets and a crashed net per side crashed.
SIDE_NETS = _net.SIDE_NETS
LAYOUT = "td4-196+f10"      # 2 sides x (24 points x 4 units + bar + off), 2 x 5 features
INPUTS = 206
PREVIOUS_LAYOUT = "td4-196"  # the raw inputs only
PREVIOUS_INPUTS = 196
FEATURE_NAMES = ("shots", "trapped", "prime", "rearmost", "dance")
#: The optional feature groups, in the order of their inputs (bit ``i`` of a
#: net's group mask is the ``i``-th), with the names of their inputs per side
#: (definitions at ``net_features`` in ``bgfast._net``).
GROUPS = {
    "contain": ("contain", "contain2"),
    "contact": ("contact_pips", "contact_checkers"),
    "anchors": ("home_anchor", "forward_anchor", "rear_anchor"),
    "hits": ("pip_loss", "double_shots"),
    "mobility": ("mobility", "blocked_dice"),
    "off": tuple(f"off{j}" for j in range(1, 15)),
}
_ARRAYS = ("w1", "b1", "w2", "b2")
#: The arrays of a file's one-sided race net (optional; with ``os_min_points``).
_OS_ARRAYS = tuple("os_" + k for k in _ARRAYS)


def group_mask(groups) -> int:
    """The bit mask of feature groups: an int mask, or names (an iterable or
    a comma-separated string; ``""``, ``None``: no group).  Raises
    :class:`bgfast.errors.BgfastError` for an unknown name or a bad mask."""
    if groups is None:
        return 0
    if isinstance(groups, (int, np.integer)) and not isinstance(groups, bool):
        if not 0 <= int(groups) < 1 << len(GROUPS):
            raise BgfastError(f"feature groups must be a mask of {len(GROUPS)} bits, not {groups}")
        return int(groups)
    if isinstance(groups, str):
        groups = groups.split(",")
    names = list(GROUPS)
    mask = 0
    for g in groups:
        g = str(g).strip()
        if not g:
            continue
        if g not in GROUPS:
            raise BgfastError(f"unknown feature group {g!r}; the groups are {', '.join(names)}")
        mask |= 1 << names.index(g)
    return mask


def group_names(groups) -> tuple:
    """The names of the groups of a mask (or names), in input order."""
    mask = group_mask(groups)
    return tuple(g for i, g in enumerate(GROUPS) if mask >> i & 1)


def layout_of(groups=0) -> str:
    """The layout name of a net with these feature groups: :data:`LAYOUT`,
    then ``+NAME`` per group."""
    return LAYOUT + "".join("+" + g for g in group_names(groups))


def _parse_layout(layout: str):
    """The group mask of a layout name, None when it is not one of ours."""
    if layout != LAYOUT and not layout.startswith(LAYOUT + "+"):
        return None
    try:
        mask = group_mask(layout[len(LAYOUT):].split("+")[1:])
    except BgfastError:
        return None
    return mask if layout_of(mask) == layout else None


def group_rows(groups) -> list:
    """``(bit, start, stop)`` of each group of a net with the groups
    ``groups``: the rows of its inputs in ``w1``."""
    mask = group_mask(groups)
    out, at = [], INPUTS
    for i, g in enumerate(GROUPS):
        if mask >> i & 1:
            out.append((i, at, at + 2 * len(GROUPS[g])))
            at += 2 * len(GROUPS[g])
    return out


def input_names(groups=0) -> tuple:
    """The names of the hand-made inputs of a net with these groups, in
    order (``"NAME/0"`` for the player on roll, ``"NAME/1"`` the opponent)."""
    out = [f"{n}/{side}" for side in (0, 1) for n in FEATURE_NAMES]
    for g in group_names(groups):
        out += [f"{n}/{side}" for side in (0, 1) for n in GROUPS[g]]
    return tuple(out)


class NetFileError(DatabaseError):
    """A net weights file that is missing, truncated, corrupt or of another format/layout."""


def checksum(w1, b1, w2, b2, one_sided=None) -> str:
    """sha256 (hex) over the shapes and little-endian float32 bytes of the
    arrays, then (when there is one) those of the one-sided race net
    (:meth:`Net.set_one_sided`) and its first point."""
    h = hashlib.sha256()
    arrays = [w1, b1, w2, b2]
    if one_sided is not None:
        arrays += [one_sided[k] for k in _ARRAYS]
    for a in arrays:
        a = np.ascontiguousarray(a, dtype="<f4")
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    if one_sided is not None:
        h.update(b"min_points=%d" % int(one_sided["min_points"]))
    return h.hexdigest()


class Net:
    """A loaded net: the weights (a kernel :class:`bgfast._net.Model`) and
    its metadata (``meta`` dict)."""

    def __init__(self, model: "_net.Model", meta: dict | None = None, one_sided: dict | None = None):
        self.model = model
        self.meta = dict(meta or {})
        #: the one-sided race net (:meth:`set_one_sided`), or None
        self.one_sided = None
        if one_sided is not None:
            self.set_one_sided(one_sided)

    def set_one_sided(self, one_sided: dict | None) -> None:
        """Give the net a one-sided race net (None: remove it), a dict of
        ``w1`` float32[100, H], ``b1[H]``, ``w2[H, 64 D]``, ``b2[64 D]`` (D = 2
        or 3 distributions) and ``min_points``.  With the bear-off tables on,
        a race in which each side either lies inside the race table or has a
        checker beyond its point ``min_points`` is then valued by
        convolution, as the race table values the races it holds, with the
        one-sided net's distributions of the rolls each side beyond the
        table needs to bear off and to take its first checker off
        (docs/training.md#the-one-sided-race-net).  A side with a checker
        on its points 19-24, in the other side's home board, needs the third
        distribution, of the rolls it needs to bring them all out, which
        counts the backgammons; without it the race net values such races.
        Raises :class:`bgfast.errors.BgfastError` for bad shapes."""
        if one_sided is None:
            self.model.set_one_sided(None, None, None, None, 0)
            self.one_sided = None
            return
        a = {k: np.ascontiguousarray(one_sided[k], dtype=np.float32) for k in _ARRAYS}
        points = int(one_sided["min_points"])
        try:
            self.model.set_one_sided(a["w1"], a["b1"], a["w2"], a["b2"], points)
        except ValueError as exc:
            raise BgfastError(str(exc)) from None
        self.one_sided = {**a, "min_points": points}

    def checksum(self) -> str:
        """The weights' :func:`checksum`, the one-sided race net's included."""
        return checksum(**self.arrays(), one_sided=self.one_sided)

    @property
    def hidden(self) -> int:
        return self.model.hidden

    @property
    def groups(self) -> int:
        """The bit mask of its feature groups (:data:`GROUPS`)."""
        return self.model.groups

    @property
    def layout(self) -> str:
        return layout_of(self.groups)

    @property
    def nets(self) -> int:
        """2 (contact, race), 3 (contact, race, crashed), :data:`PLAN_NETS`
        (and the contact plan nets) or :data:`SIDE_NETS` (and crashed-other)."""
        return self.model.nets

    def arrays(self) -> dict:
        return {k: np.array(getattr(self.model, k)) for k in _ARRAYS}

    def copy(self) -> "Net":
        a = self.arrays()
        return Net(_net.Model(a["w1"], a["b1"], a["w2"], a["b2"], self.groups), self.meta, self.one_sided)

    def set_cache(self, log2: int) -> None:
        """Give 0-ply evaluation a cache of ``2**log2`` entries of 104 bytes
        (0: none; at least one set of 4; a net starts with ``2**17``, made
        on first use).  A board's hash picks a set of 4 entries, and a miss
        replaces the set's entries in turn.  Calls of at most 256 boards on
        one thread go through it, keyed by the whole board: a hit returns
        the very values the net computed, so the cache changes the speed,
        never the results."""
        if isinstance(log2, bool) or not isinstance(log2, (int, np.integer)):
            raise BgfastError(f"cache size must be an integer (log2), not {log2!r}")
        try:
            self.model.set_cache(int(log2))
        except ValueError as exc:
            raise BgfastError(str(exc)) from None

    def cache_info(self) -> dict:
        """The evaluation cache: ``{"log2": entries (log2), "lookups": the
        evaluations asked of the net through it, "hits": those answered
        from it}``."""
        log2, lookups, hits = self.model.cache_info()
        return {"log2": log2, "lookups": lookups, "hits": hits}

    def evaluate_batch(self, boards, *, tables: bool = True, nthreads: int = 1) -> np.ndarray:
        """0-ply probabilities float64[N, 5] for the player on roll."""
        b = as_boards(boards)
        if tables:
            ensure_tables()
        return self.model.evaluate(b, tables, nthreads)

    def evaluate_plies(self, boards, plies: int, *, tables: bool = True) -> np.ndarray:
        b = as_boards(boards)
        if tables:
            ensure_tables()
        return self.model.evaluate_plies(b, int(plies), tables)

    def choose(self, boards, dice, *, plies: int = 0, noise: float = 0.0, seed: int = 0,
               tables: bool = True):
        """The play chosen for each (board, dice) at ``plies`` (0, 1, 2) with
        Gaussian equity noise of std ``noise`` (seeded): ``(counts int64[N],
        results uint8[N, 2, 25])``, results with the turn passed."""
        b, d = boards_and_dice(boards, dice)
        if tables:
            ensure_tables()
        counts, results = self.model.choose(b, d, int(plies), float(noise), int(seed) & (2**64 - 1),
                                            tables)
        if counts.size and counts.min() < 0:
            i = int(np.flatnonzero(counts < 0)[0])
            raise _kernel_failure(i, int(counts[i]))
        return counts, results


def features(boards, groups=0) -> np.ndarray:
    """The hand-made features float32[N, F] of boards: the 10 base ones
    (player on roll first, then the opponent; per side
    :data:`FEATURE_NAMES`), then those of each group of ``groups``
    (:func:`input_names` names them all)."""
    return _net.features(as_boards(boards), group_mask(groups))


def random_net(hidden: int = 64, seed: int = 0, scale: float = 0.1, groups=0) -> Net:
    """Small random weights (the start of training), seeded."""
    mask = group_mask(groups)
    rng = np.random.default_rng(seed)
    w1 = rng.uniform(-scale, scale, (2, INPUTS, hidden)).astype(np.float32)
    b1 = np.zeros((2, hidden), np.float32)
    w2 = rng.uniform(-scale, scale, (2, hidden, 5)).astype(np.float32)
    b2 = np.zeros((2, 5), np.float32)
    if mask:        # the draws above stay those of a net without groups
        extra = rng.uniform(-scale, scale, (2, _net.feature_count(mask) - (INPUTS - PREVIOUS_INPUTS),
                                            hidden)).astype(np.float32)
        w1 = np.concatenate([w1, extra], axis=1)
    return Net(_net.Model(w1, b1, w2, b2, mask), {"init_seed": seed, "hidden": hidden})


def widen(net: Net, groups) -> Net:
    """A copy of ``net`` with the feature groups ``groups`` added to its
    own: the new inputs get zero weights, so it evaluates exactly as
    ``net`` does."""
    old, new = net.groups, net.groups | group_mask(groups)
    a = net.arrays()
    w1 = a["w1"]
    rows = {bit: (a0, a1) for bit, a0, a1 in group_rows(old)}
    blocks = [w1[:, :INPUTS]]
    for bit, a0, a1 in group_rows(new):
        if bit in rows:
            blocks.append(w1[:, rows[bit][0]:rows[bit][1]])
        else:
            blocks.append(np.zeros((w1.shape[0], a1 - a0, w1.shape[2]), np.float32))
    meta = dict(net.meta)
    if new != old:
        meta["widened_from"] = {"layout": net.layout, "checksum": checksum(**a)}
    return Net(_net.Model(np.concatenate(blocks, axis=1), a["b1"], a["w2"], a["b2"], new), meta,
               net.one_sided)


def add_hidden(net: Net, hidden: int, seed: int = 0, scale: float = 0.1) -> Net:
    """A copy of ``net`` with ``hidden`` hidden units in each net: the new
    units get seeded uniform(-scale, scale) input weights (zero on the
    feature groups' rows of a net that does not read its groups, such as the
    race net of the shipped net), zero biases and zero output weights, so it
    evaluates exactly as ``net`` does (the start of training a larger net
    from a smaller one)."""
    from .errors import BgfastError

    h0 = net.hidden
    if not h0 <= hidden <= MAX_HIDDEN:
        raise BgfastError(f"hidden units must be {h0}..{MAX_HIDDEN} (the net has {h0}), "
                          f"not {hidden}")
    if hidden == h0:
        return net.copy()
    a = net.arrays()
    rng = np.random.default_rng(seed)
    nn = net.nets
    extra = rng.uniform(-scale, scale, (2, a["w1"].shape[1], hidden - h0)).astype(np.float32)
    if nn > 2:                       # the crashed net's units after the contact and race nets'
        extra = np.concatenate([extra, rng.uniform(-scale, scale, (nn - 2, a["w1"].shape[1], hidden - h0)
                                                   ).astype(np.float32)])
    for k, read in enumerate(net.model.read_groups):
        for bit, a0, a1 in group_rows(net.groups):
            if not read >> bit & 1:  # a net that skips a group's inputs keeps skipping them
                extra[k, a0:a1] = 0.0
    w1 = np.concatenate([a["w1"], extra], axis=2)
    b1 = np.concatenate([a["b1"], np.zeros((nn, hidden - h0), np.float32)], axis=1)
    w2 = np.concatenate([a["w2"], np.zeros((nn, hidden - h0, 5), np.float32)], axis=1)
    meta = dict(net.meta, hidden=hidden,
                hidden_added={"from": h0, "seed": seed, "checksum": checksum(**a)})
    return Net(_net.Model(w1, b1, w2, a["b2"], net.groups), meta, net.one_sided)


def add_crashed(net: Net) -> Net:
    """A copy of ``net`` with a crashed net (:data:`NET_NAMES`) that is a
    copy of its contact net, so it evaluates exactly as ``net`` does (a net
    that has one is copied as it is); training then fits it to the crashed
    positions alone (``bgfast train supervised --crashed-net``)."""
    if net.nets > 2:
        return net.copy()
    return _with_copies(net, 0, 1, "crashed_added")


def add_plan(net: Net) -> Net:
    """A copy of ``net`` with the contact plan nets (:data:`NET_NAMES`): its
    contact net copied three times (after a crashed net, which a net of two
    gets first, :func:`add_crashed`), so it evaluates exactly as ``net``
    does (a net that has them is copied as it is); training then fits each
    plan band's net to its own positions (``bgfast train supervised
    --plan-nets``)."""
    if net.nets >= PLAN_NETS:
        return net.copy()
    return _with_copies(add_crashed(net), 0, PLAN_NETS - 3, "plan_added", edges=list(_net.PLAN_EDGES))


def add_sides(net: Net) -> Net:
    """A copy of ``net`` with a crashed net per side crashed
    (:data:`SIDE_NETS`, :data:`NET_NAMES`): its crashed net copied as
    crashed-other (after the plan nets, which a net without them gets
    first, :func:`add_plan`), so it evaluates exactly as ``net`` does (a net
    that has it is copied as it is); training then fits each of the two to
    its own positions (``bgfast train supervised --crashed-sides``)."""
    if net.nets == SIDE_NETS:
        return net.copy()
    return _with_copies(add_plan(net), 2, 1, "sides_added")


def _with_copies(net: Net, source: int, copies: int, key: str, **info) -> Net:
    """``net`` with ``copies`` more nets after its own, each a copy of its
    net ``source``, and ``meta[key]`` recording the checksum of the arrays
    it grew from (and ``info``)."""
    a = net.arrays()
    grown = {k: np.concatenate([v] + [v[source:source + 1]] * copies) for k, v in a.items()}
    meta = dict(net.meta, **{key: {"checksum": checksum(**a), **info}})
    return Net(_net.Model(grown["w1"], grown["b1"], grown["w2"], grown["b2"], net.groups), meta,
               net.one_sided)


def save(net: Net, path) -> None:
    """Write ``net`` to ``path`` (.npz), atomically (a temporary file then rename)."""
    a = net.arrays()
    extra = {}
    if net.one_sided is not None:
        extra = {"os_" + k: net.one_sided[k] for k in _ARRAYS}
        extra["os_min_points"] = np.int64(net.one_sided["min_points"])
    with atomic_open(path, "wb") as f:
        np.savez_compressed(f, format_version=np.int64(FORMAT_VERSION), layout=np.str_(net.layout),
                            checksum=np.str_(net.checksum()),
                            meta=np.str_(json.dumps(net.meta, sort_keys=True)), **a, **extra)


def load(path, *, previous: bool = False) -> Net:
    """Read a weights file written by :func:`save`; :class:`NetFileError` if it is not valid.

    ``previous``: also accept a file of :data:`PREVIOUS_LAYOUT` (no
    features); the feature weights are then zero."""
    name = os.fspath(path) if not hasattr(path, "read_bytes") else str(path)
    try:
        data = path.read_bytes() if hasattr(path, "read_bytes") else Path(path).read_bytes()
    except OSError as exc:
        raise NetFileError(f"cannot read net weights {name}: {exc.strerror or exc}") from None
    try:
        z = np.load(io.BytesIO(data), allow_pickle=False)
        keys = set(z.files)
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise NetFileError(f"{name} is not a net weights file (.npz): {exc}") from None
    missing = {"format_version", "layout", "checksum", *_ARRAYS} - keys
    if missing:
        raise NetFileError(f"{name} is not a bgfast net weights file (missing {', '.join(sorted(missing))})")
    try:
        version = int(z["format_version"])
        layout = str(z["layout"])
        stored = str(z["checksum"])
        a = {k: z[k] for k in _ARRAYS}
        meta = json.loads(str(z["meta"])) if "meta" in keys else {}
        os_keys = keys & {*_OS_ARRAYS, "os_min_points"}
        one_sided = None
        if os_keys:
            if len(os_keys) != len(_OS_ARRAYS) + 1:
                raise NetFileError(f"{name} is corrupt: its one-sided race net lacks "
                                   f"{', '.join(sorted({*_OS_ARRAYS, 'os_min_points'} - os_keys))}")
            one_sided = {k[3:]: z[k] for k in _OS_ARRAYS}
            one_sided["min_points"] = int(z["os_min_points"])
    except (OSError, ValueError, TypeError, zipfile.BadZipFile, EOFError, KeyError) as exc:
        raise NetFileError(f"{name} is corrupt: {exc}") from None
    if not isinstance(meta, dict):
        raise NetFileError(f"{name} is corrupt: its metadata is not a JSON object")
    if version != FORMAT_VERSION:
        raise NetFileError(f"{name} has net format version {version}; this bgfast reads version "
                           f"{FORMAT_VERSION}")
    old = previous and layout == PREVIOUS_LAYOUT
    groups = 0 if old else _parse_layout(layout)
    if groups is None:
        raise NetFileError(f"{name} has input layout {layout!r}; this bgfast reads {LAYOUT!r}, "
                           f"optionally followed by feature groups "
                           f"({', '.join('+' + g for g in GROUPS)}, in this order)")
    if any(a[k].dtype != np.float32 for k in _ARRAYS) or (
            one_sided is not None and any(one_sided[k].dtype != np.float32 for k in _ARRAYS)):
        raise NetFileError(f"{name}: the weights must be float32")
    if checksum(**a, one_sided=one_sided) != stored:
        raise NetFileError(f"{name} is corrupt: checksum mismatch")
    if not all(np.isfinite(w).all() for w in (*a.values(), *(
            () if one_sided is None else (one_sided[k] for k in _ARRAYS)))):
        raise NetFileError(f"{name}: its weights are not all finite numbers")
    if old:
        w1 = a["w1"]
        if w1.ndim != 3 or w1.shape[:2] != (2, PREVIOUS_INPUTS):
            raise NetFileError(f"{name}: w1 has shape {w1.shape}, not (2, {PREVIOUS_INPUTS}, H)")
        a["w1"] = np.concatenate(
            [w1, np.zeros((2, INPUTS - PREVIOUS_INPUTS, w1.shape[2]), np.float32)], axis=1)
        # the previous metadata is kept (a training run started from this net
        # replaces "train"; its copy in "extended_from" stays)
        meta = {**meta, "extended_from": {"layout": layout, "checksum": stored,
                                          "meta": json.loads(json.dumps(meta))}}
    nin = PREVIOUS_INPUTS + _net.feature_count(groups)
    if a["w1"].ndim != 3 or a["w1"].shape[0] not in _net.NET_COUNTS or a["w1"].shape[1] != nin:
        raise NetFileError(f"{name}: w1 has shape {a['w1'].shape}, not ({_net.NET_COUNTS_TEXT} "
                           f"nets, {nin}, H) as its layout {layout!r} has")
    try:
        model = _net.Model(a["w1"], a["b1"], a["w2"], a["b2"], groups)
        return Net(model, meta, one_sided)
    except (ValueError, BgfastError) as exc:
        raise NetFileError(f"{name}: {exc}") from None


def default_weights_path():
    """The weights shipped with the package."""
    return resources.files("bgfast") / "data" / "net" / "bgfast-net.npz"


_DEFAULT = None
#: The environment variable that names a weights file to use instead of the
#: shipped net (by every evaluator, player and rollout named ``net``).
WEIGHTS_ENV = "BGFAST_NET"


def default_net() -> Net:
    """The net named ``net`` everywhere (loaded once): the weights file
    named by ``$BGFAST_NET`` when it is set, else the shipped net."""
    global _DEFAULT
    if _DEFAULT is None:
        path = os.environ.get(WEIGHTS_ENV, "").strip()
        if path:
            try:
                _DEFAULT = load(path)
            except NetFileError as exc:
                raise NetFileError(f"${WEIGHTS_ENV}: {exc}") from None
        else:
            _DEFAULT = load(default_weights_path())
    return _DEFAULT


class NetEvaluator(Evaluator):
    """The neural net as an evaluator of :mod:`bgfast.evaluate` (name ``"net"``):
    finished games exactly, bear-off positions from the bear-off databases,
    race and contact positions by the net.  ``plies`` > 0 evaluates with
    look-ahead; :meth:`choose` picks plays at that depth."""

    name = "net"
    kernel = None          # no fixed slot: rollouts install the net in one (rollout.NET_EVALUATOR_SLOT)

    def __init__(self, net: Net | str | os.PathLike | None = None, plies: int = 0,
                 nthreads: int = 1):
        if net is None:
            net = default_net()
        elif not isinstance(net, Net):
            net = load(net)
        self.net = net
        self.plies = int(plies)
        self.nthreads = int(nthreads)

    def evaluate_batch(self, boards) -> np.ndarray:
        if self.plies:
            return self.net.evaluate_plies(boards, self.plies)
        return self.net.evaluate_batch(boards, nthreads=self.nthreads)

    def choose(self, boards, dice):
        return self.net.choose(boards, dice, plies=self.plies)

