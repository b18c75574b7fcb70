"""Eight short lessons whose questions are answered by the engine.

The lesson structure (positions, dice, question kinds and the answers the
author expects) is in ``data/lessons/lessons.json``; the words are in
``data/lessons/<lang>.json`` (English ``en`` and Danish ``da``), keyed by the
``text`` keys of the structure.  Every question is checked with the engine
at run time (:meth:`Question.engine_answer`), and the tests make sure the
stored answers agree with it.

Question kinds:

* ``pips`` -- the pip count of the player on roll;
* ``pip_lead`` -- by how many pips the player on roll leads;
* ``checkers`` -- checkers of the player on roll on the board;
* ``count_plays`` -- how many different legal plays the roll has;
* ``legal_play`` -- type any legal play for the roll;
* ``shots`` -- how many of the 36 rolls hit a blot;
* ``result_points`` -- what the finished game scores with the given cube;
* ``pass_points`` -- what a pass of a double from the given cube scores;
* ``take_or_pass`` -- a last-roll position: take or pass the double;
* ``can_double`` -- may the player on roll double at this match score;
* ``crawford_next`` -- after these games, is the next one the Crawford game.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources

from .errors import BgfastError, InvalidMoveError
from .formats import match_play
from .game import Game, Match, result_kind
from .movegen import ALL_ROLLS, ROLL_WEIGHTS, legal_plays
from .position import Position

__all__ = ["Lesson", "Page", "Question", "load_lessons", "load_text", "LANGUAGES"]

LANGUAGES = ("en", "da")


def _data(name: str) -> dict:
    path = resources.files("bgfast") / "data" / "lessons" / name
    with path.open(encoding="utf-8") as fh:
        return json.load(fh)


def load_text(lang: str = "en") -> dict:
    """The words of the lessons in ``lang`` (``en`` or ``da``)."""
    if lang not in LANGUAGES:
        raise BgfastError(f"no lessons in language {lang!r}; choose from {', '.join(LANGUAGES)}")
    return _data(f"{lang}.json")


def _finishes(pos: Position, d1: int, d2: int) -> bool:
    """Can the player on roll bear off every checker with this roll?"""
    return any(int(p.position.board[0].sum()) == 0 for p in legal_plays(pos, d1, d2))


def _last_roll_chances(pos: Position) -> float:
    """For a doubler on roll whose opponent surely finishes next turn: the
    opponent's (the taker's) chances, found by playing out all 36 rolls."""
    taker = pos.swap()
    for (a, b) in ALL_ROLLS:
        if not _finishes(taker, int(a), int(b)):
            raise BgfastError("take_or_pass needs a position where the taker finishes next turn")
    wins = sum(int(w) for (a, b), w in zip(ALL_ROLLS, ROLL_WEIGHTS)
               if _finishes(pos, int(a), int(b)))
    return 1.0 - wins / 36.0


@dataclass(frozen=True)
class Question:
    """One question: ``kind`` (see the module doc), its data and the stored answer."""

    kind: str
    text: str
    answer: object
    position: str | None = None
    dice: tuple | None = None
    cube: int = 1
    length: int = 0
    score: tuple = (0, 0)
    crawford: bool = False
    cube_owner: int | None = None
    games: tuple = ()
    explain: str | None = None

    def pos(self) -> Position:
        return Position.parse(self.position)

    def engine_answer(self):
        """The answer computed by the engine (an int, a play, or a word key)."""
        k = self.kind
        if k == "pips":
            return self.pos().pip_count()[0]
        if k == "pip_lead":
            a, b = self.pos().pip_count()
            return b - a
        if k == "checkers":
            return self.pos().checkers()[0]
        if k == "count_plays":
            return len(legal_plays(self.pos(), *self.dice))
        if k == "legal_play":
            return sorted(p.notation for p in legal_plays(self.pos(), *self.dice))
        if k == "shots":
            return self.pos().shots()
        if k == "result_points":
            found = result_kind(self.pos())
            if found is None:
                raise BgfastError("result_points needs a finished position")
            return int(found[1]) * self.cube
        if k == "pass_points":
            g = Game(position=Position.initial(), on_roll=0, cube_value=self.cube,
                     cube_owner=self.cube_owner)
            g.double()
            g.drop()
            return g.result.points
        if k == "take_or_pass":
            return "take" if _last_roll_chances(self.pos()) >= 0.25 else "pass"
        if k == "can_double":
            g = Game(match_length=self.length, score=self.score, crawford=self.crawford,
                     position=self.pos() if self.position else Position.initial(), on_roll=0, cube_owner=self.cube_owner,
                     cube_value=self.cube)
            return "yes" if g.can_double() else "no"
        if k == "crawford_next":
            m = Match(self.length)
            for winner, points in self.games:
                g = m.new_game()
                g.start()
                g.resign(points, player=1 - winner)  # a win of 1-3 points, cube 1
                g.accept()
            return "yes" if m.next_is_crawford() else "no"
        raise BgfastError(f"unknown question kind {k!r}")

    def check(self, reply: str, words: dict) -> bool:
        """Is ``reply`` (what the learner typed) right?  ``words`` maps the
        answer keys (yes, no, take, pass) to the words of the language."""
        reply = reply.strip().lower()
        truth = self.engine_answer()
        if self.kind == "legal_play":
            try:
                return match_play(self.pos().board, reply,
                                  legal_plays(self.pos(), *self.dice)) is not None
            except InvalidMoveError:
                return False
        if isinstance(truth, int):
            try:
                return int(reply) == truth
            except ValueError:
                return False
        accepted = {truth, str(words.get(truth, truth)).lower()}
        accepted |= {w.lower() for w in words.get(f"{truth}_synonyms", [])}
        return reply in accepted

    def shown_answer(self, words: dict) -> str:
        truth = self.engine_answer()
        if self.kind == "legal_play":
            return str(self.answer)
        if isinstance(truth, int):
            return str(truth)
        return str(words.get(truth, truth))


@dataclass(frozen=True)
class Page:
    text: str
    position: str | None = None
    question: Question | None = None


@dataclass(frozen=True)
class Lesson:
    number: int
    id: str
    pages: tuple = field(default_factory=tuple)

    def title(self, words: dict) -> str:
        return words[f"{self.id}.title"]

    def questions(self):
        return [p.question for p in self.pages if p.question is not None]


def load_lessons() -> list[Lesson]:
    """The eight lessons, in order."""
    data = _data("lessons.json")
    out = []
    for n, raw in enumerate(data["lessons"], 1):
        pages = []
        for p in raw["pages"]:
            q = p.get("question")
            if q is not None:
                q = dict(q)
                for key in ("dice", "score"):
                    if key in q:
                        q[key] = tuple(q[key])
                if "games" in q:
                    q["games"] = tuple(tuple(x) for x in q["games"])
                q = Question(**q)
            pages.append(Page(text=p["text"], position=p.get("position"), question=q))
        out.append(Lesson(n, raw["id"], tuple(pages)))
    return out
