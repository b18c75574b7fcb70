"""gnubg's native match format, SGF (``FF[4]GM[6]``): export and import.

A file is a collection of game trees, one per game::

    (;FF[4]GM[6]CA[UTF-8]AP[bgfast:1.0]MI[length:5][game:0][ws:0][bs:0]
      PW[Alice]PB[Bob]RU[Crawford]RE[W+2]
    ;B[21lnab]
    ;W[52mhxv]
    ;B[double]
    ;W[take]
    ...)

The root node of each game holds the match: ``MI`` (length, 0 = money;
the game's number from 0; the score before it, ``ws`` for White = player 0,
``bs`` for Black = player 1), ``PW`` / ``PB`` (names), ``RU`` (``Crawford``,
``Crawford:CrawfordGame`` in the Crawford game, ``Jacoby`` in money play)
and ``RE`` (the result: ``W+2``, ``B+4R`` = won by resignation).  Then one
node per action: ``W[...]`` / ``B[...]`` is the dice and the checker moves
(two letters a move: ``a``..``x`` the points in White's numbering 1..24,
``y`` the bar, ``z`` off; just the dice when the roll cannot be played),
or ``double`` / ``take`` / ``drop``.  A beaver is written as gnubg writes
it: the doubled side doubles at once (a second ``double``), a raccoon is a
third ``double``, and then the side last doubled answers ``take``.  A roll that was not moved
before a resignation is a ``PL[..]DI[..]`` node.  bgfast writes its options
(cube off, cube cap, beaver, ...) in a private root property ``BG[...]``
that gnubg ignores, so a round trip is exact.

What the format cannot hold and bgfast drops on export: rejected
resignations and the opening ties (thrown again; only the deciding throw is
written).  Automatic doubles and the "starter rolls afresh" opening, which
need the single opening dice, are refused with
:class:`bgfast.errors.InvalidRecordError`.

Import reads gnubg's files: every play and cube action is replayed through
:class:`bgfast.game.Game` (so an illegal one is refused), the score of each
game is checked against ``MI`` and the result against ``RE``; only the main
line of each tree is read (as gnubg does).  gnubg's analysis and annotation
properties (``A``, ``DA``, ``LU``, ``GS``, ``MR``, ``C``, marks, ...) are
read past and not kept: a :class:`bgfast.game.Match` has no place for them,
and ``bgfast analyze-match`` computes its own.  Bad files raise
:class:`bgfast.errors.InvalidRecordError` naming the game and node; nothing
is half-imported.
"""
from __future__ import annotations

import re

import numpy as np

from . import __version__
from ._files import atomic_write, read_input
from .errors import BgfastError, InvalidRecordError
from .formats import MAX_MATCH_LENGTH
from .game import Game, Match, Phase, Rules, check_name
from .matfile import parse_rules, rules_items
from .position import INITIAL_BOARD, Position

__all__ = ["dumps", "loads", "dump", "load", "is_record", "load_record", "dump_record"]

_MAX_FILE = 64 << 20  # no match file comes near 64 MiB
_SETUP = ("AE", "AB", "AW", "CV", "CP")  # properties that edit the board or the cube
_NOTES = {"A", "DA", "LU", "GS", "MR", "C", "N", "CR", "SQ", "TR", "MA", "CH"}  # analysis, marks


# ---------------------------------------------------------------------------
# export
# ---------------------------------------------------------------------------

def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _point(player: int, p: int) -> str:
    """The letter of point ``p`` (1..24, 25 = bar, 0 = off) of ``player``."""
    if p == 25:
        return "y"
    if p == 0:
        return "z"
    return chr(ord("a") + (p - 1 if player == 0 else 24 - p))


def _moves(player: int, moves) -> str:
    # gnubg's order: starting point, then landing point, both decreasing
    return "".join(_point(player, a) + _point(player, t)
                   for a, t in sorted(moves, key=lambda m: (-m[0], -m[1])))


_COLOUR = "WB"


def _setup_nodes(game: Game) -> list[str]:
    """The set-up nodes of a game that began from a position, as gnubg
    writes them: the board (``AE[a:y]`` clears it, ``AW``/``AB`` one value
    a checker), the player on roll, the cube value and its owner."""
    start = game.setup
    if start["position"] is None:
        return []
    board = Position.from_position_id(start["position"]).board
    on_roll = start["on_roll"]
    rows = {on_roll: board[1], 1 - on_roll: board[0]}
    adds = "".join(
        f"A{_COLOUR[player]}" + "".join(f"[{_point(player, i + 1)}]" * int(n)
                                       for i, n in enumerate(rows[player]) if n)
        for player in (0, 1))
    nodes = [f"PL[{_COLOUR[on_roll]}]AE[a:y]{adds}"]
    if start["cube_value"] != 1:
        nodes.append(f"CV[{start['cube_value']}]")
    if start["cube_owner"] is not None:
        nodes.append(f"CP[{_COLOUR[start['cube_owner']].lower()}]")
    return nodes


def _game_nodes(game: Game) -> list[str]:
    replay = game.replay_start()
    nodes: list[str] = _setup_nodes(game)
    roll = None
    acts = game.actions
    for i, act in enumerate(acts):
        k, who = act.kind, act.player
        if k == "opening":
            if act.dice[0] == act.dice[1] and game.rules.auto_doubles:
                raise InvalidRecordError("an SGF file cannot hold an automatic double "
                                         "(the single opening dice are not recorded)")
        elif k == "roll":
            roll = act.dice
        elif k == "move":
            d = replay.dice if roll is None else roll
            nodes.append(f"{_COLOUR[who]}[{d[0]}{d[1]}{_moves(who, act.moves)}]")
            roll = None
        elif k in ("double", "take", "drop"):
            nodes.append(f"{_COLOUR[who]}[{k}]")
        elif k in ("beaver", "raccoon"):
            nodes.append(f"{_COLOUR[who]}[double]")
            if k == "beaver" and (i + 1 == len(acts) or acts[i + 1].kind != "raccoon"):
                nodes.append(f"{_COLOUR[1 - who]}[take]")  # the doubler accepts the beaver
            elif k == "raccoon":
                nodes.append(f"{_COLOUR[1 - who]}[take]")
        elif k == "accept" and replay._phase_before_resign == Phase.MOVE:
            nodes.append(f"PL[{_COLOUR[replay.turn]}]DI[{replay.dice[0]}{replay.dice[1]}]")
            roll = None
        replay.apply(act)
    if replay.phase == Phase.MOVE:  # rolled, not moved (the game goes on)
        nodes.append(f"PL[{_COLOUR[replay.turn]}]DI[{replay.dice[0]}{replay.dice[1]}]")
    return nodes


def _root(match: Match, i: int, game: Game, score) -> str:
    props = [f"FF[4]GM[6]CA[UTF-8]AP[bgfast:{__version__}]",
             f"MI[length:{match.length}][game:{i}][ws:{score[0]}][bs:{score[1]}]",
             f"PW[{_escape(match.names[0])}]PB[{_escape(match.names[1])}]"]
    if match.length and match.rules.crawford:
        props.append("RU[Crawford:CrawfordGame]" if game.crawford else "RU[Crawford]")
    elif not match.length and match.rules.jacoby:
        props.append("RU[Jacoby]")
    res = game.result
    if res is not None:
        props.append(f"RE[{_COLOUR[res.winner]}+{res.points}{'R' if res.how == 'resign' else ''}]")
    props.append(f"BG[{rules_items(match.rules)}]")
    return "".join(props)


def dumps(match: Match) -> str:
    """The match (or money session) as SGF text."""
    if match.rules.opening_reroll:
        raise InvalidRecordError("an SGF file cannot hold the 'starter rolls afresh' opening")
    for name in match.names:
        try:
            check_name(name)
        except BgfastError as exc:
            raise InvalidRecordError(f"player name: {exc}") from None
    trees = []
    score = [0, 0]
    for i, g in enumerate(match.games):
        nodes = [_root(match, i, g, score)] + _game_nodes(g)
        trees.append("(;" + "\n;".join(nodes) + ")")
        if g.result is not None:
            score[g.result.winner] += g.result.points
    return "\n".join(trees) + "\n"


def dump(match: Match, path) -> None:
    """Write ``match`` to the file ``path`` (atomically)."""
    atomic_write(path, dumps(match))


# ---------------------------------------------------------------------------
# the SGF syntax
# ---------------------------------------------------------------------------

_IDENT_RE = re.compile(r"[A-Za-z]+")


def _parse_trees(text: str) -> list[list[dict[str, list[str]]]]:
    """The main line of each game tree (its first variation at every branch,
    as gnubg reads it): a list of nodes, each ``{ident: [values]}``."""
    pos, n = 0, len(text)
    trees: list[list[dict]] = []
    stack: list[list] = []  # per open tree: [on the main line, number of subtrees]

    def fail(msg: str):
        raise InvalidRecordError(f"SGF: {msg} at character {pos + 1}")

    while pos < n:
        c = text[pos]
        if c.isspace():
            pos += 1
        elif c == "(":
            if not stack:
                trees.append([])
                stack.append([True, 0])
            else:
                parent = stack[-1]
                stack.append([parent[0] and parent[1] == 0, 0])
                parent[1] += 1
            pos += 1
        elif c == ")":
            if not stack:
                fail("unmatched ')'")
            stack.pop()
            pos += 1
        elif c == ";":
            if not stack:
                fail("a node outside a game tree")
            if stack[-1][1]:
                fail("a node after a variation")
            pos += 1
            node: dict[str, list[str]] = {}
            while True:
                while pos < n and text[pos].isspace():
                    pos += 1
                m = _IDENT_RE.match(text, pos)
                if m is None:
                    break
                ident = "".join(ch for ch in m.group() if ch.isupper())
                pos = m.end()
                values = []
                while True:
                    while pos < n and text[pos].isspace():
                        pos += 1
                    if pos >= n or text[pos] != "[":
                        break
                    pos += 1
                    out = []
                    while pos < n and text[pos] != "]":
                        if text[pos] == "\\" and pos + 1 < n:
                            pos += 1
                            if text[pos] == "\n":  # a soft line break
                                pos += 1
                                continue
                        out.append(text[pos])
                        pos += 1
                    if pos >= n:
                        fail("a property value is not closed by ']'")
                    pos += 1
                    values.append("".join(out))
                if not values or not ident:
                    fail(f"property {m.group()!r} without a value")
                node.setdefault(ident, []).extend(values)
            if stack[-1][0]:
                trees[-1].append(node)
        else:
            fail(f"unexpected {c!r}")
    if stack:
        raise InvalidRecordError("SGF: the file ends inside a game tree (a ')' is missing)")
    return trees


# ---------------------------------------------------------------------------
# import
# ---------------------------------------------------------------------------

def _setup_points(values, player: int, at: str) -> list[int]:
    """The points (1..24, 25 = bar, in ``player``'s numbering) of a list of
    point values, where ``a:d`` is every point from a to d."""
    out = []
    for v in values:
        lo, colon, hi = v.strip().partition(":")
        if len(lo) != 1 or (colon and len(hi) != 1) or not ("a" <= lo <= "y") \
                or (colon and not (lo <= hi <= "y")):
            raise InvalidRecordError(f"{at}cannot read the point [{v}] (a..x, y = bar)")
        for c in range(ord(lo), ord(hi if colon else lo) + 1):
            out.append(_letter(player, chr(c)))
    return out


def _setup(tree, where: str) -> tuple[dict, int]:
    """The set-up a game tree starts with, if any: the keywords of
    :meth:`bgfast.game.Match.new_game` and the index of the first node after
    it.  gnubg writes a set-up (after ``set board``, ``set cube``) as nodes
    before the first play: ``AE`` empties points, ``AW``/``AB`` put one
    checker of White/Black on each value, ``PL`` is the player on roll,
    ``CV`` the cube value and ``CP`` its owner (``w``, ``b``, ``c``)."""
    nodes = tree[1:]
    k = next((i for i, nd in enumerate(nodes) if any(p in nd for p in _SETUP)), None)
    if k is None:
        return {}, 1
    # what came before is replaced by a set-up of the whole board: the dice
    # and plays gnubg made before "set board" (not cube actions, whose cube
    # a set-up without CV and CP would keep)
    played = False
    for i, nd in enumerate(nodes[:k]):
        value = (nd.get("W") or nd.get("B") or [""])[0].strip()
        if value in ("double", "take", "drop") or not set(nd) <= {"PL", "DI", "W", "B"} | _NOTES:
            raise InvalidRecordError(f"{where}node {i + 1}: a set-up of the board or cube "
                                     f"(node {k + 1}) after a cube action or resignation "
                                     "cannot be imported")
        played |= bool(value)
    cleared = set()
    # per player: index 1..24 the points, 25 the bar; the opening position first
    counts = [[0] + [int(n) for n in INITIAL_BOARD[1]] for _ in range(2)]
    on_roll = cube_value = cube_owner = None
    end = k
    while end < len(nodes) and set(nodes[end]) <= set(_SETUP) | {"PL"}:
        nd, at = nodes[end], f"{where}node {end + 1}: "
        for p in _setup_points(nd.get("AE", []), 0, at):
            counts[0][p] = counts[1][25 - p if p < 25 else 25] = 0
            cleared.add(p)
        for colour in "WB":
            player = "WB".index(colour)
            for p in _setup_points(nd.get(f"A{colour}", []), player, at):
                counts[player][p] += 1
        pl = _one(nd, "PL", at)
        if pl is not None:
            if pl not in ("W", "B"):
                raise InvalidRecordError(f"{at}PL[{pl}] is not W or B")
            on_roll = "WB".index(pl)
        cv = _one(nd, "CV", at)
        if cv is not None:
            if not re.fullmatch(r"\s*[0-9]{1,9}\s*", cv, re.ASCII):
                raise InvalidRecordError(f"{at}cannot read the cube value CV[{cv[:20]}]")
            cube_value = int(cv)
        cp = _one(nd, "CP", at)
        if cp is not None:
            if cp.strip().lower() not in ("w", "b", "c"):
                raise InvalidRecordError(f"{at}CP[{cp}] is not w, b or c")
            cube_owner = {"w": 0, "b": 1, "c": None}[cp.strip().lower()]
        end += 1
    if played and len(cleared) < 25:
        raise InvalidRecordError(f"{where}node {k + 1}: a set-up after play began must clear "
                                 "the whole board (AE[a:y])")
    if on_roll is None:                         # the player of the next node
        nxt = nodes[end] if end < len(nodes) else {}
        pl = _one(nxt, "PL", f"{where}node {end + 1}: ")
        on_roll = "WB".index(pl) if pl in ("W", "B") else next(
            ("WB".index(c) for c in "WB" if c in nxt), 0)
    if any(n > 15 for row in counts for n in row) or any(sum(row) > 15 for row in counts):
        raise InvalidRecordError(f"{where}the set-up has more than 15 checkers of a side")
    board = np.zeros((2, 25), dtype=np.uint8)
    board[1] = counts[on_roll][1:]
    board[0] = counts[1 - on_roll][1:]
    try:
        position = Position(board)
    except BgfastError as exc:
        raise InvalidRecordError(f"{where}the set-up: {str(exc).removeprefix('board 0: ')}") \
            from None
    return ({"position": position, "on_roll": on_roll,
             "cube_value": 1 if cube_value is None else cube_value, "cube_owner": cube_owner},
            end + 1)


_MI_RE = re.compile(r"(length|game|ws|bs):([0-9]{1,9})", re.ASCII)
_RE_RE = re.compile(r"([WB])\+([0-9]{1,9})(R?)", re.ASCII)
_MOVE_RE = re.compile(r"([1-6])([1-6])((?:[a-z]{2}){0,4})", re.ASCII)


def _letter(player: int, ch: str) -> int:
    if ch == "y":
        return 25
    if ch == "z":
        return 0
    if not "a" <= ch <= "x":
        raise InvalidRecordError(f"{ch!r} is not a point letter (a..x, y = bar, z = off)")
    i = ord(ch) - ord("a")
    return i + 1 if player == 0 else 24 - i


def _one(node: dict, ident: str, where: str) -> str | None:
    vals = node.get(ident)
    if vals is None:
        return None
    if len(vals) != 1:
        raise InvalidRecordError(f"{where}property {ident} has {len(vals)} values, not one")
    return vals[0]


def _root_info(node: dict, where: str) -> dict:
    if _one(node, "GM", where) != "6":
        raise InvalidRecordError(f"{where}not a backgammon game (GM[6] is missing)")
    info = {"length": None, "game": None, "ws": 0, "bs": 0}
    for v in node.get("MI", []):
        m = _MI_RE.fullmatch(v)
        if m:
            info[m.group(1)] = int(m.group(2))
    info["names"] = (_one(node, "PW", where) or "White", _one(node, "PB", where) or "Black")
    info["rules"] = node.get("RU", [])
    info["bg"] = _one(node, "BG", where)
    re_ = _one(node, "RE", where)
    info["result"] = None
    if re_:
        m = _RE_RE.fullmatch(re_.strip())
        if m is None:
            raise InvalidRecordError(f"{where}cannot read the result RE[{re_}]")
        info["result"] = ("WB".index(m.group(1)), int(m.group(2)), bool(m.group(3)))
    return info


def _rules_from(infos: list[dict], trees) -> tuple[int, Rules]:
    first = infos[0]
    length = first["length"] or 0
    if length > MAX_MATCH_LENGTH:
        raise InvalidRecordError(f"game 1: a {length}-point match: the longest match a "
                                 f"Match ID can hold is {MAX_MATCH_LENGTH} points")
    if first["bg"] is not None:
        return length, parse_rules(first["bg"], "game 1: BG: ")
    ru = set(v for info in infos for v in info["rules"])
    crawford = any(v.startswith("Crawford") for v in ru)
    if length == 0:
        beaver = raccoon = False
        for tree in trees:  # a double answered by a double is a beaver, the next a raccoon
            run = 0
            for node in tree[1:]:
                v = (node.get("W") or node.get("B") or [""])[0]
                run = run + 1 if v == "double" else 0
                beaver |= run >= 2
                raccoon |= run >= 3
        return 0, Rules(jacoby="Jacoby" in ru, beaver=beaver, raccoon=raccoon)
    return length, Rules(crawford=crawford)


class _Importer:
    def __init__(self, text: str, names):
        self.text = text
        self.names = names

    def run(self) -> Match:
        trees = _parse_trees(self.text)
        if not trees:
            raise InvalidRecordError("SGF: no game tree found")
        for i, tree in enumerate(trees):
            if not tree:
                raise InvalidRecordError(f"game {i + 1}: an empty game tree")
        infos = [_root_info(t[0], f"game {i + 1}: ") for i, t in enumerate(trees)]
        length, rules = _rules_from(infos, trees)
        try:
            match = Match(length, rules, names=self.names or infos[0]["names"])
        except BgfastError as exc:
            raise InvalidRecordError(f"game 1: {exc}") from None
        for i, (tree, info) in enumerate(zip(trees, infos)):
            where = f"game {i + 1}: "
            if (info["length"] or 0) != length:
                raise InvalidRecordError(f"{where}the match length is {info['length']}, "
                                         f"not {length} as in game 1")
            if info["game"] is not None and info["game"] != i:
                raise InvalidRecordError(f"{where}MI gives game number {info['game']} "
                                         f"(counting from 0), not {i}")
            if (info["ws"], info["bs"]) != match.score:
                raise InvalidRecordError(f"{where}the score is {info['ws']}-{info['bs']}, but "
                                         f"the games before give "
                                         f"{match.score[0]}-{match.score[1]}")
            setup, first = _setup(tree, where)
            try:
                game = match.new_game(**setup)
            except BgfastError as exc:
                raise InvalidRecordError(f"{where}{exc}") from None
            self.game(game, tree, info, where, first)
        return match

    def game(self, game: Game, tree, info: dict, where: str, first: int = 1) -> None:
        holding = None  # the side that must "take" a beaver or a raccoon
        last = len(tree) - 1
        for j, node in enumerate(tree[first:], first):
            at = f"{where}node {j}: "
            if (first > 1 and j < last and set(node) <= {"PL", "DI"}
                    and any(c in tree[j + 1] for c in "WB")):
                continue        # set-up dice that the next play's own dice replace
            try:
                holding = self.node(game, node, holding, at, j == last)
            except InvalidRecordError:
                raise
            except BgfastError as exc:
                raise InvalidRecordError(f"{at}{exc}") from None
        if holding is not None:
            raise InvalidRecordError(f"{where}the game ends before the beaver is taken")
        res = info["result"]
        if res is None:
            return
        winner, points, resigned = res
        if not game.over:
            if not resigned or game.phase in (Phase.OPENING, Phase.DOUBLED, Phase.BEAVERED):
                raise InvalidRecordError(f"{where}the result is RE[{'WB'[winner]}+{points}"
                                         f"{'R' if resigned else ''}], but the game is not over")
            cube = game.cube_value
            kind = points // cube
            if points % cube or not 1 <= kind <= 3:
                raise InvalidRecordError(f"{where}{points} points is not 1, 2 or 3 times the "
                                         f"cube ({cube})")
            try:
                game.resign(kind, player=1 - winner)
                game.accept()
            except BgfastError as exc:
                raise InvalidRecordError(f"{where}{exc}") from None
        r = game.result
        if (r.winner, r.points) != (winner, points):
            raise InvalidRecordError(f"{where}RE gives {'WB'[winner]} {points} points, but "
                                     f"the game gives {'WB'[r.winner]} {r.points}")

    def node(self, game: Game, node: dict, holding, at: str, is_last: bool):
        edits = [k for k in _SETUP if k in node]
        if edits:
            raise InvalidRecordError(
                f"{at}a set-up of the board or cube ({', '.join(edits)}) after play began "
                "cannot be imported; a game can be set up only before its first play")
        moves = [(c, node[c]) for c in "WB" if c in node]
        if not moves:
            if "DI" in node:  # gnubg's dice node: the roll of the player on roll
                d = _one(node, "DI", at)
                pl = _one(node, "PL", at)
                if not re.fullmatch(r"[1-6][1-6]", d or ""):
                    raise InvalidRecordError(f"{at}cannot read the dice DI[{d}]")
                if pl is not None and pl not in ("W", "B"):
                    raise InvalidRecordError(f"{at}PL[{pl}] is not W or B")
                player = game.to_act if pl is None else "WB".index(pl)
                dice = (int(d[0]), int(d[1]))
                if game.phase == Phase.OPENING:
                    self.opening(game, player, dice, at)
                else:
                    self.expect(game, player, "roll", at)
                    game.roll(dice)
            return holding
        if len(moves) > 1 or len(moves[0][1]) != 1:
            raise InvalidRecordError(f"{at}a node holds one move (W or B), once")
        colour, (value,) = moves[0]
        player = "WB".index(colour)
        value = value.strip()
        if value == "double":
            self.expect(game, player, value, at)
            if game.phase == Phase.DOUBLED:
                game.beaver()
                return 1 - player
            if game.phase == Phase.BEAVERED:
                game.raccoon()
                return 1 - player
            game.double()
            return None
        if value in ("take", "drop"):
            if holding is not None:
                if player != holding or value != "take":
                    raise InvalidRecordError(f"{at}{colour}[{value}] answers a beaver; "
                                             f"{'WB'[holding]} must take it")
                return None
            self.expect(game, player, value, at)
            game.take() if value == "take" else game.drop()
            return None
        if holding is not None:
            raise InvalidRecordError(f"{at}{colour}[{value}] before the beaver is taken")
        m = _MOVE_RE.fullmatch(value)
        if m is None:
            raise InvalidRecordError(f"{at}cannot read the move {colour}[{value}]")
        dice = (int(m.group(1)), int(m.group(2)))
        letters = m.group(3)
        steps = tuple((_letter(player, letters[k]), _letter(player, letters[k + 1]))
                      for k in range(0, len(letters), 2))
        if game.phase == Phase.OPENING:
            self.opening(game, player, dice, at)
        elif game.phase == Phase.MOVE and game.turn == player \
                and sorted(game.dice) == sorted(dice):
            if not steps and is_last:  # gnubg writes the roll of an unfinished turn so
                return None
        else:
            self.expect(game, player, "roll", at)
            before = len(game.actions)
            game.roll(dice)
            if len(game.actions) > before + 1:  # the roll cannot be played
                if steps:
                    raise InvalidRecordError(f"{at}moves are written for {dice[0]}{dice[1]}, "
                                             "which cannot be played")
                return None
        if game.phase != Phase.MOVE:
            if steps:
                raise InvalidRecordError(f"{at}moves are written for {dice[0]}{dice[1]}, "
                                         "which cannot be played")
            return None
        if not steps:
            if is_last:     # the roll of an unfinished turn, as gnubg writes it
                return None
            raise InvalidRecordError(f"{at}{colour}[{value}] plays nothing, though "
                                     f"{dice[0]}{dice[1]} can be played")
        game.play(steps)
        return None

    @staticmethod
    def expect(game: Game, player: int, what: str, at: str) -> None:
        if game.over:
            raise InvalidRecordError(f"{at}{'WB'[player]}[{what}] after the game ended")
        if game.to_act != player:
            raise InvalidRecordError(f"{at}{'WB'[player]}[{what}], but "
                                     f"{'WB'[game.to_act]} is to act")

    @staticmethod
    def opening(game: Game, player: int, dice, at: str) -> None:
        if dice[0] == dice[1]:
            raise InvalidRecordError(f"{at}the opening roll {dice[0]}{dice[1]} is a double")
        hi, lo = max(dice), min(dice)
        game.opening_roll((hi, lo) if player == 0 else (lo, hi))


def loads(text: str, *, names=None) -> Match:
    """Import SGF text into a :class:`Match` (replaying every play).

    The options come from bgfast's ``BG`` property when present, else from
    gnubg's ``RU`` (Crawford, Jacoby), with beavers (and raccoons) allowed in
    a money session whose cube actions use them.  ``names`` overrides the
    players' names.  Raises :class:`InvalidRecordError` naming the game and
    node.
    """
    if not isinstance(text, str):
        raise InvalidRecordError(f"an SGF record must be text, not {type(text).__name__}")
    return _Importer(text, names).run()


def load(path, **kw) -> Match:
    """Import the SGF file at ``path``; a path that cannot be read raises
    :class:`InvalidRecordError`."""
    text = read_input(path, InvalidRecordError, limit=_MAX_FILE)
    if len(text) > _MAX_FILE:
        raise InvalidRecordError(f"{path}: more than {_MAX_FILE >> 20} MiB: not a match file")
    return loads(text, **kw)


# ---------------------------------------------------------------------------
# either record format, by the file's suffix
# ---------------------------------------------------------------------------

def is_record(path) -> bool:
    """True for a match record path bgfast reads and writes as text: a
    ``.sgf`` (this module) or a ``.mat`` (:mod:`bgfast.matfile`) file."""
    return str(path).lower().endswith((".sgf", ".mat"))


def load_record(path, **kw) -> Match:
    """Import a match record: SGF for a ``.sgf`` file, ``.mat`` otherwise."""
    from . import matfile

    return (load if str(path).lower().endswith(".sgf") else matfile.load)(path, **kw)


def dump_record(match: Match, path) -> None:
    """Write ``match`` as SGF to a ``.sgf`` path, as ``.mat`` otherwise."""
    from . import matfile

    (dump if str(path).lower().endswith(".sgf") else matfile.dump)(match, path)
