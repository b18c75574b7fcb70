"""``bgfast play`` (a game in the terminal), ``bgfast lesson`` and ``bgfast mat``."""
from __future__ import annotations

import copy

import click

from . import emit_json, fail, main
from ._options import SEED, given_options, json_option
from ..errors import BgfastError
from ..formats import format_play
from ..game import Game, Match, PartialPlay, Phase, Rules, check_name
from ..savegame import MAX_LENGTH
from ..players import Heuristic, make_player, step, win_estimate
from ..position import Position, diagram

SYMBOLS = ("X", "O")
KIND_NAMES = {1: "single game", 2: "gammon", 3: "backgammon"}
_KIND_WORDS = {"single": 1, "s": 1, "1": 1, "gammon": 2, "g": 2, "2": 2,
               "backgammon": 3, "b": 3, "bg": 3, "3": 3}

def roll_help(can_double: bool, can_raccoon: bool = False) -> str:
    """The commands before a roll, listing only the cube actions allowed now."""
    lines = ["Commands before your roll:",
             "  r, roll (or just Enter)   roll the dice"]
    if can_double:
        lines.append("  d, double                 offer a double")
    if can_raccoon:
        lines.append("  raccoon                   redouble again, keeping the cube")
    lines += ["  resign [single|gammon|backgammon]",
              "  hint                      what the computer would do",
              "  auto                      let the computer decide for you",
              "  board, help, quit"]
    return "\n".join(lines)


HELP_MOVE = """Type moves in gnubg notation, all at once or a checker at a time:
  24/18 13/11   bar/22*   6/off   13/7(2)   8/5*/3
  u, undo                   take back the last checker move of this turn
  hint                      the checkers that can move, and the best plays ranked
  auto                      play the suggested play
  resign [single|gammon|backgammon]
  board, help, quit"""



def ranked_plays_text(g: Game, top: int = 5) -> str:
    """The best ``top`` plays of the roll to play in ``g``, ranked by
    :func:`bgfast.hint.hint` at its default depth and the game's cube and
    score, with their values and losses against the best."""
    from ..cube import CubeContext
    from ..hint import hint

    h = hint(g.position(), g.dice, context=CubeContext.from_game(g, g.turn), top=top)
    if not h.plays:
        return "No legal play: the roll cannot be played."
    kind = {"cubeless": "cubeless equity", "cubeful": "cubeful equity",
            "mwc": "match winning chance"}[h.ranked_by]
    lines = [f"Best plays ({h.evaluator}, {h.ply}-ply, {kind}):"]
    for p in h.plays:
        if h.ranked_by == "mwc":
            value, loss = f"{100 * p.mwc:.2f}%", f"  ({-100 * p.loss:+.2f}%)"
        else:
            value, loss = f"{p.value:+.3f}", f"  ({-p.loss:+.3f})"
        lines.append(f"  {p.rank}. {p.play:<24} {value}{'' if p.rank == 1 else loss}")
    return "\n".join(lines)

class _Quit(Exception):
    pass


def _points(n: int) -> str:
    return f"{n} point{'s' if n != 1 else ''}"


class TerminalGame:
    """The terminal front end: prompts people, lets computer players act,
    narrates every action and draws the board."""

    def __init__(self, match: Match, players, *, err: bool, single: bool):
        self.match = match
        self.players = players          # None = a person
        self.err = err
        self.single = single
        self.humans = [i for i in (0, 1) if players[i] is None]
        self.adviser = Heuristic()
        self._shown_at = None

    # -- output ---------------------------------------------------------------
    def say(self, text: str = "") -> None:
        click.echo(text, err=self.err)

    def ask(self, text: str) -> str:
        try:
            return click.prompt(text, default="", show_default=False, prompt_suffix="> ",
                                err=self.err).strip()
        except (click.Abort, EOFError):
            raise _Quit() from None

    def name(self, p: int) -> str:
        return self.match.names[p]

    def does(self, p: int, verb: str) -> str:
        """'You roll' / 'Beginner rolls'."""
        name = self.name(p)
        if name == "You":
            return f"You {verb}"
        return f"{name} {verb + 'es' if verb.endswith('ss') else verb + 's'}"

    def viewer(self, game: Game) -> int:
        if len(self.humans) == 1:
            return self.humans[0]
        if len(self.humans) == 2:
            return game.to_act
        return 0

    def show(self, game: Game, board=None) -> None:
        if board is None:
            self._shown_at = (id(game), len(game.actions))
        v = self.viewer(game)
        pos = Position(game.board_of(v) if board is None else board)
        lines = diagram(pos, on_roll=SYMBOLS[v], opponent=SYMBOLS[1 - v]).split("\n")[:-2]
        self.say("\n".join(lines))
        pips, off = pos.pip_count(), pos.borne_off()
        self.say(f" {self.name(v)} ({SYMBOLS[v]}): {pips[0]} pips, {off[0]} off    "
                 f"{self.name(1 - v)} ({SYMBOLS[1 - v]}): {pips[1]} pips, {off[1]} off")
        cube = "centred" if game.cube_owner is None else f"owned by {self.name(game.cube_owner)}"
        if not game.rules.cube:
            cube_text = "no cube"
        elif game.crawford:
            cube_text = "Crawford game: no doubling"
        else:
            cube_text = f"cube {game.cube_value}, {cube}"
        s = game.score
        target = f"match to {self.match.length}" if self.match.length else "money"
        self.say(f" {cube_text};  score {self.name(0)} {s[0]}, {self.name(1)} {s[1]} ({target})")
        if game.phase != Phase.OVER:
            self.say(f" Position ID: {game.position_id()}  Match ID: {game.match_id()}")

    def narrate(self, game: Game, start: int, board_before) -> None:
        for a in game.actions[start:]:
            who = self.name(a.player) if a.player >= 0 else ""
            k = a.kind
            if k == "opening":
                d0, d1 = a.dice
                text = f"Opening roll: {self.name(0)} {d0}, {self.name(1)} {d1}"
                if d0 == d1:
                    text += " -- equal, roll again"
                    if game.auto_doubles:
                        text += f" (cube now {game.cube_value})"
                else:
                    text += f" -- {self.does(0 if d0 > d1 else 1, 'start')}"
                self.say(text)
            elif k == "roll":
                self.say(f"{self.does(a.player, 'roll')} {a.dice[0]}-{a.dice[1]}.")
            elif k == "move":
                if a.moves:
                    self.say(f"{self.does(a.player, 'play')} {format_play(board_before, a.moves)}.")
                else:
                    self.say(f"{who} cannot move.")
            elif k == "double":
                self.say(f"{self.does(a.player, 'double')} to {a.value}.")
            elif k == "take":
                self.say(f"{self.does(a.player, 'take')}.")
            elif k == "drop":
                self.say(f"{self.does(a.player, 'pass')}.")
            elif k == "beaver":
                self.say(f"{self.does(a.player, 'beaver')}: the cube is {a.value}.")
            elif k == "raccoon":
                self.say(f"{self.does(a.player, 'raccoon')}: the cube is {a.value}.")
            elif k == "resign":
                self.say(f"{self.does(a.player, 'offer')} to resign a {KIND_NAMES[a.value]}.")
            elif k == "accept":
                self.say(f"{self.does(a.player, 'accept')}.")
            elif k == "reject":
                self.say(f"{self.does(a.player, 'reject')}.")
        if game.over:
            r = game.result
            kind = KIND_NAMES[int(r.kind)]
            self.say(f"{self.does(r.winner, 'win')} a {kind} and {_points(r.points)}.")

    # -- the loop ---------------------------------------------------------------
    def run(self) -> None:
        m = self.match
        while True:
            g = m.game
            if g is None or g.over:
                if m.over or (self.single and g is not None):
                    break
                g = m.new_game()
                s = m.score
                extra = " (the Crawford game: no doubling)" if g.crawford else ""
                self.say(f"\nGame {len(m.games)}: {self.name(0)} {s[0]}, "
                         f"{self.name(1)} {s[1]}{extra}")
            who = g.to_act
            start = len(g.actions)
            before = g.board_of(g.turn)
            if g.phase == Phase.OPENING or self.players[who] is not None:
                step(g, [self.players[0] or self.adviser, self.players[1] or self.adviser])
            else:
                self.human(g, who)
            self.narrate(g, start, before)
        s = m.score
        if m.length:
            self.say(f"\n{self.does(m.winner, 'win')} the match {max(s)}-{min(s)} "
                     f"({self.name(0)} {s[0]}, {self.name(1)} {s[1]}).")
        else:
            self.say(f"\nFinal score: {self.name(0)} {s[0]}, {self.name(1)} {s[1]}.")

    # -- people -----------------------------------------------------------------
    def human(self, g: Game, who: int) -> None:
        ph = g.phase
        if ph == Phase.ROLL or ph == Phase.BEAVERED:
            self.human_roll(g, who)
        elif ph == Phase.MOVE:
            self.human_move(g, who)
        elif ph == Phase.DOUBLED:
            self.human_answer_double(g, who)
        elif ph == Phase.RESIGNED:
            self.human_answer_resign(g, who)

    def _resign(self, g: Game, who: int, arg: str) -> bool:
        kind = _KIND_WORDS.get(arg.lower() or "single")
        if kind is None:
            self.say("Resign what? single, gammon or backgammon.")
            return False
        g.resign(kind, player=who)
        return True

    def human_roll(self, g: Game, who: int) -> None:
        can = g.can_double(live=True)
        self.show(g)
        can_raccoon = g.can_raccoon()
        opts = "[r]oll" + (", [d]ouble" if can else "") + (", raccoon" if can_raccoon else "")
        while True:
            cmd, _, arg = self.ask(f"{self.name(who)} ({SYMBOLS[who]}) to play: {opts}, "
                                   "hint, help").partition(" ")
            cmd = cmd.lower()
            if cmd in ("", "r", "roll"):
                g.roll()
                return
            if cmd in ("d", "double"):
                if not can:
                    self.say(f"You cannot double now: {g.why_no_double(live=True)}.")
                    continue
                g.double()
                return
            if cmd == "raccoon" and can_raccoon:
                g.raccoon()
                return
            if cmd == "resign":
                if self._resign(g, who, arg.strip()):
                    return
                continue
            if cmd == "hint":
                p = win_estimate(g.position())
                advice = ("double" if can and self.adviser.wants_to_double(g) else "roll")
                self.say(f"Hint: {advice} (the computer estimates your chances at {p:.0%}).")
                continue
            if cmd == "auto":
                if can and self.adviser.wants_to_double(g):
                    g.double()
                else:
                    g.roll()
                return
            if cmd == "board":
                self.show(g)
                continue
            if cmd in ("q", "quit"):
                raise _Quit()
            if cmd not in ("help", "?"):
                self.say(f"Unknown command {cmd!r}.")
            self.say(roll_help(can, can_raccoon))

    def human_move(self, g: Game, who: int) -> None:
        pp = PartialPlay(g)
        if self._shown_at != (id(g), len(g.actions) - 1) or g.actions[-1].kind != "roll":
            self.show(g)  # not shown since the roll (e.g. the opening roll)
        while True:
            left = " ".join(str(d) for d in pp.dice_left)
            text = self.ask(f"{self.name(who)} ({SYMBOLS[who]}) rolled {g.dice[0]}-{g.dice[1]}, "
                            f"dice left {left}: your move")
            cmd, _, arg = text.partition(" ")
            low = cmd.lower()
            if low in ("u", "undo"):
                if not pp.undo():
                    self.say("Nothing to take back.")
                self.show(g, pp.board())
                continue
            if low == "hint":
                opts = pp.options()
                moves = ", ".join(f"{'bar' if a == 25 else a}/{'off' if t == 0 else t}"
                                  for a, t, _d in opts)
                self.say(f"Checkers that can move: {moves}")
                self.say(ranked_plays_text(g))
                continue
            if low == "auto":
                g.play(self.adviser.choose_play(g, g.legal_plays()))
                return
            if low == "resign":
                if self._resign(g, who, arg.strip()):
                    return
                continue
            if low == "board":
                self.show(g, pp.board())
                continue
            if low in ("q", "quit"):
                raise _Quit()
            if low in ("help", "?", ""):
                self.say(HELP_MOVE)
                continue
            try:
                pp.move(text)
            except BgfastError as exc:
                self.say(f"Not possible: {exc}")
                continue
            done = pp.complete
            if done is not None:
                g.play(done)
                return
            self.show(g, pp.board())

    def human_answer_double(self, g: Game, who: int) -> None:
        self.show(g)
        beaver = g.can_beaver()
        opts = "[t]ake, [p]ass" + (", [b]eaver" if beaver else "")
        while True:
            cmd = self.ask(f"{self.name(g.turn)} doubles to {g.cube_value * 2}. "
                           f"{self.name(who)}: {opts}, hint").lower()
            if cmd in ("t", "take"):
                g.take()
                return
            if cmd in ("p", "pass", "drop"):
                g.drop()
                return
            if cmd in ("b", "beaver") and beaver:
                g.beaver()
                return
            if cmd in ("hint", "auto"):
                answer = self.adviser.respond_to_double(g)
                if cmd == "auto":
                    {"take": g.take, "drop": g.drop, "beaver": g.beaver}[answer]()
                    return
                self.say(f"Hint: {answer}.")
                continue
            if cmd in ("q", "quit"):
                raise _Quit()
            self.say(f"Answer {opts}.")

    def human_answer_resign(self, g: Game, who: int) -> None:
        by, kind = g.resignation_offer
        while True:
            cmd = self.ask(f"{self.name(by)} offers to resign a {KIND_NAMES[int(kind)]} "
                           f"({_points(int(kind) * g.cube_value)}). {self.name(who)}: "
                           "[a]ccept or [r]eject").lower()
            if cmd == "auto":
                cmd = "accept" if self.adviser.accepts_resignation(g, kind) else "reject"
            if cmd in ("a", "accept"):
                g.accept()
                return
            if cmd in ("r", "reject"):
                g.reject()
                return
            if cmd in ("q", "quit"):
                raise _Quit()


LEVELS = ("human", "beginner", "heuristic", "easy", "medium", "hard", "expert")


#: The options of ``play`` that a resumed match takes from its file.
_RESUMED_OPTIONS = ("length", "cube", "crawford", "max_cube", "jacoby", "beaver", "raccoon",
                    "auto_doubles", "names")


@main.command()
@click.option("--opponent", "-o", type=click.Choice(LEVELS, case_sensitive=False),
              default="heuristic", show_default=True,
              help="Who plays O: a computer level, or 'human' for two people on one terminal.")
@click.option("--you", type=click.Choice(LEVELS, case_sensitive=False), default="human",
              show_default=True, help="Who plays X (a level lets two computers play).")
@click.option("--match", "-m", "length", type=click.IntRange(0, MAX_LENGTH), default=0,
              show_default=True, help="Match length (3, 5, 7, 11, ...); 0 = a single game.")
@click.option("--cube/--no-cube", default=True, show_default=True, help="Use the doubling cube.")
@click.option("--crawford/--no-crawford", default=True, show_default=True,
              help="The Crawford rule in matches.")
@click.option("--max-cube", type=int, default=64, show_default=True,
              help="Cube limit (a power of two; 0 = none).")
@click.option("--jacoby", is_flag=True, help="Money play: the Jacoby rule.")
@click.option("--beaver", is_flag=True, help="Money play: beavers allowed.")
@click.option("--raccoon", is_flag=True, help="Money play: raccoons allowed (with --beaver).")
@click.option("--auto-doubles", type=click.IntRange(0, 10), default=0, show_default=True,
              help="Money play: automatic doubles on equal opening throws (limit).")
@click.option("--watch", is_flag=True,
              help="Computer against computer: X plays at the --opponent level too "
                   "(unless --you names another level).")
@click.option("--seed", type=SEED, default=None, help="Seed for the dice (same seed, same dice).")
@click.option("--names", default=None,
              help="Player names as 'NAME_X,NAME_O' (no control characters).")
@click.option("--save", type=click.Path(dir_okay=False), default=None,
              help="Save the match at the end or on quit: FILE.mat as a gnubg/Jellyfish "
                   "record, FILE.sgf as gnubg SGF, any other name as JSON holding the exact state (resumable; "
                   "signed with this installation's key, so an edited file is refused).")
@click.option("--resume", "resume_file", type=click.Path(exists=True, dir_okay=False),
              default=None, help="Continue a match saved with --save (JSON, .mat or .sgf); its "
                                 "length, rules and names come from the file.")
@json_option("Print the result as JSON on stdout (the game goes to stderr).")
def play(opponent, you, length, cube, crawford, max_cube, jacoby, beaver, raccoon, auto_doubles,
         watch, seed, names, save, resume_file, as_json):
    """Play backgammon in the terminal against the computer, or two people.

    Type moves in gnubg notation (24/18 13/11, bar/22*, 6/off); 'undo' takes
    back a checker move while the turn still has dice left; 'hint' and 'help'
    are there whenever you are asked.
    """
    if watch and you.lower() == "human":
        you = opponent
    kinds = (you.lower(), opponent.lower())
    if save is not None:        # before the match: a bad path must not cost the match
        _check_save_path(save)
    if resume_file is not None:
        given = given_options(*_RESUMED_OPTIONS)
        if given:
            raise click.UsageError(f"the match of --resume has its own length, rules and "
                                   f"names: drop {', '.join(given)}")
        match = _load_match(resume_file)
        length = match.length
        names = match.names
        cube = match.rules.cube
        crawford = match.rules.crawford
    else:
        rules = Rules(cube=cube, max_cube=max_cube, crawford=crawford, jacoby=jacoby,
                      beaver=beaver, raccoon=raccoon, auto_doubles=auto_doubles)
        rules.check_for_match(length)
        names = _names(names, kinds)
        match = Match(length, rules, seed=seed, names=names)
    players = [None if k == "human" else
               make_player(k, None if seed is None else (seed + 1 + i) % 2 ** 64)
               for i, k in enumerate(kinds)]
    tg = TerminalGame(match, players, err=as_json, single=length == 0)
    what = f"a {length}-point match" if length else "a single game"
    tg.say(f"bgfast: {what}, {names[0]} (X) against {names[1]} (O); "
           f"cube {'on' if cube else 'off'}"
           + (f", Crawford {'on' if crawford else 'off'}" if length else "") + ".")
    quit_early = False
    try:
        tg.run()
    except _Quit:
        quit_early = True
        tg.say("\nGame abandoned.")
    if save:
        _save_match(match, save)
        tg.say(f"Saved to {save}.")
    if as_json:
        emit_json({
            "length": match.length, "names": list(match.names), "score": list(match.score),
            "over": match.over or (length == 0 and match.game is not None and match.game.over),
            "winner": match.winner if length else (match.game.result.winner
                                                   if match.game and match.game.over else None),
            "abandoned": quit_early,
            "games": [{"winner": g.result.winner, "points": g.result.points,
                       "kind": g.result.kind.name.lower(), "how": g.result.how,
                       "crawford": g.crawford}
                      for g in match.games if g.result is not None],
        })


def _names(text: str | None, kinds) -> tuple[str, str]:
    """The two names: ``--names 'NAME_X,NAME_O'`` (each checked by
    :func:`bgfast.game.check_name`) or defaults from who plays."""
    if text:
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 2 or not all(parts):
            raise click.BadParameter("give two names as 'NAME_X,NAME_O'", param_hint="--names")
        try:
            return check_name(parts[0]), check_name(parts[1])
        except BgfastError as exc:
            raise click.BadParameter(str(exc), param_hint="--names") from None
    humans = kinds.count("human")
    default = []
    for i, k in enumerate(kinds):
        if k == "human":
            default.append("You" if humans == 1 else f"Player{SYMBOLS[i]}")
        else:
            default.append(k.capitalize() + ("" if kinds[0] != kinds[1] else SYMBOLS[i]))
    return default[0], default[1]


def _is_mat(path: str) -> bool:
    from ..sgf import is_record

    return is_record(path)


def _check_save_path(path: str) -> None:
    """Refuse a --save FILE that cannot be written (and, for a JSON save,
    a save key that cannot be made) before the match starts."""
    from .._files import check_writable

    check_writable(path)
    if not _is_mat(path):
        from ..savegame import install_key

        install_key()


def _save_match(match: Match, path: str) -> None:
    """FILE.mat / FILE.sgf: a gnubg/Jellyfish or gnubg SGF record; otherwise the signed JSON of
    :mod:`bgfast.savegame` with the exact state (every action and the dice
    generator), written atomically."""
    try:
        if _is_mat(path):
            from ..sgf import dump_record

            dump_record(match, path)
        else:
            from ..savegame import save

            save(match, path)
    except OSError as exc:
        fail(f"cannot save to {path}: {exc.strerror or exc}")


def _load_match(path: str) -> Match:
    """A match saved by ``bgfast play --save`` (signed JSON, see
    :mod:`bgfast.savegame`) or any .mat or .sgf record."""
    if _is_mat(path):
        from ..sgf import load_record

        return load_record(path)
    from ..savegame import load

    return load(path)


# ---------------------------------------------------------------------------
# .mat files
# ---------------------------------------------------------------------------

@main.group()
def mat():
    """Read and check .mat (Jellyfish / gnubg) match records."""


@mat.command("info")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@json_option("JSON output.")
def mat_info(path, as_json):
    """Import PATH, a .mat or .sgf record (checking every play), and summarise
    it: players, score, games."""
    from ..sgf import load_record

    m = load_record(path)
    games = []
    for i, g in enumerate(m.games, 1):
        r = g.result
        games.append({"game": i, "score_before": list(g.score), "crawford": g.crawford,
                      "winner": r.winner if r else None, "points": r.points if r else None,
                      "how": r.how if r else None,
                      "moves": sum(1 for a in g.actions if a.kind == "move")})
    if as_json:
        emit_json({"length": m.length, "names": list(m.names), "score": list(m.score),
                   "over": m.over, "winner": m.winner, "games": games})
        return
    click.echo(f"{m.length}-point match" if m.length else "money session")
    click.echo(f"{m.names[0]} {m.score[0]}, {m.names[1]} {m.score[1]}"
               + (f"  (won by {m.names[m.winner]})" if m.over else ""))
    for row in games:
        res = (f"{m.names[row['winner']]} wins {_points(row['points'])} ({row['how']})"
               if row["winner"] is not None else "unfinished")
        craw = " [Crawford]" if row["crawford"] else ""
        click.echo(f"  Game {row['game']}{craw}: {row['score_before'][0]}-"
                   f"{row['score_before'][1]}, {row['moves']} plays, {res}")


# ---------------------------------------------------------------------------
# lessons
# ---------------------------------------------------------------------------

def _lesson_board(question, position_text):
    pos = Position.parse(position_text)
    if question is not None and question.kind == "take_or_pass":
        pos = pos.swap()  # the learner is the one being doubled
    lines = diagram(pos, on_roll="X", opponent="O").split("\n")
    pips, off = pos.pip_count(), pos.borne_off()
    return "\n".join(lines[:-2] + [f" X: {pips[0]} pips, {off[0]} off    "
                                   f"O: {pips[1]} pips, {off[1]} off"])


@main.command()
@click.argument("number", type=click.IntRange(1, 8), required=False)
@click.option("--lang", type=click.Choice(["en", "da"]), default="en", show_default=True,
              help="Language of the lessons.")
@json_option("Print the lesson (or the list) as JSON with the engine's answers; no questions asked.")
def lesson(number, lang, as_json):
    """Eight short lessons: rules, moving, hitting, bearing off, scoring, the
    cube, Crawford and match play, basic strategy.  Without NUMBER, list them.

    Each lesson draws positions with the engine, asks questions and checks
    your answers with the engine.
    """
    from ..lessons import load_lessons, load_text

    words = load_text(lang)
    lessons = load_lessons()
    if number is None:
        if as_json:
            emit_json([{"number": ls.number, "id": ls.id, "title": ls.title(words)}
                       for ls in lessons])
            return
        click.echo(words["ui.lessons"])
        for ls in lessons:
            click.echo(f"  {ls.number}. {ls.title(words)}")
        return
    ls = lessons[number - 1]
    if as_json:
        pages = []
        for p in ls.pages:
            entry = {"text": words[p.text], "position": p.position}
            q = p.question
            if q is not None:
                entry.update(position=q.position, dice=list(q.dice) if q.dice else None,
                             kind=q.kind, answer=q.shown_answer(words),
                             explain=words[q.explain] if q.explain else None)
            pages.append(entry)
        emit_json({"number": ls.number, "id": ls.id, "title": ls.title(words), "pages": pages})
        return
    click.echo(words["ui.lesson"].format(n=ls.number, title=ls.title(words)))
    click.echo(words["ui.you_are"])
    right = total = 0
    try:
        for p in ls.pages:
            q = p.question
            click.echo("")
            position = q.position if q is not None and q.position else p.position
            if position:
                click.echo(_lesson_board(q, position))
            if q is not None and q.dice:
                click.echo(words["ui.dice"].format(d1=q.dice[0], d2=q.dice[1]))
            if q is not None and q.kind in ("result_points", "pass_points"):
                click.echo(words["ui.cube"].format(cube=q.cube))
            if q is not None and q.kind == "can_double":
                click.echo(words["ui.match"].format(length=q.length, you=q.score[0],
                                                    opp=q.score[1])
                           + (words["ui.crawford"] if q.crawford else ""))
            click.echo(words[p.text])
            if q is None:
                click.prompt(words["ui.continue"], default="", show_default=False,
                             prompt_suffix="> ")
                continue
            total += 1
            reply = click.prompt(words["ui.prompt"], default="", show_default=False,
                                 prompt_suffix="> ")
            if q.check(reply, words):
                right += 1
                click.echo(words["ui.correct"])
            else:
                shown = q.shown_answer(words)
                if q.kind == "legal_play":
                    shown = words["ui.example"].format(answer=shown)
                click.echo(words["ui.wrong"].format(answer=shown))
            if q.explain:
                click.echo(words[q.explain])
    except click.Abort:
        click.echo("")
    click.echo(words["ui.done"].format(right=right, total=total))


# ``bgfast learn`` is the lessons' name in the reference app; ``lesson`` stays as an alias.
# ``learn`` is a copy of the command under its own name, so that the generated
# command-line reference (docs/reference/cli.md) shows both names.
learn = copy.copy(lesson)
learn.name = "learn"
main.add_command(learn)
