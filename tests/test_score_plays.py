"""The score changes the best play: bgfast's cubeful ranking beside gnubg's
recorded answers (``tests/data/score_plays.json``, made by
``bench/gnubg_score_plays.py``) in races and bear-offs where gnubg's best
play at a match score is not its money best play."""
import json
from pathlib import Path

import pytest

from bgfast.cube import CubeContext
from bgfast.evaluate import rank_plays
from bgfast.movegen import legal_plays
from bgfast.position import Position
from gnubg_hints import gnubg_hints

DATA = Path(__file__).parent / "data" / "score_plays.json"
RECORDS = json.loads(DATA.read_text())["records"]


def _context(spec: dict) -> CubeContext:
    spec = dict(spec)
    return CubeContext.match(spec.pop("length"), spec.pop("score_me"), spec.pop("score_opp"),
                             **spec)


def _best(record, ctx) -> str:
    pos = Position.from_position_id(record["position_id"])
    return rank_plays(pos, *record["dice"], cube=ctx)[0].play.position.position_id()


@pytest.fixture(scope="module")
def answers():
    """(record, bgfast's best play at the score, bgfast's money best play)."""
    return [(r, _best(r, _context(r["context"])), _best(r, CubeContext.money())) for r in RECORDS]


def test_the_data_set():
    """Every score of the generator is present; each record is a change of
    gnubg's best play, both plays legal for the roll."""
    scores = {r["score"] for r in RECORDS}
    assert len(scores) >= 5, scores
    assert sum(r["exact"] for r in RECORDS) >= 10
    for r in RECORDS:
        assert r["gnubg_best_id"] != r["gnubg_money_best_id"]
        ids = {p.position.position_id() for p in
               legal_plays(Position.from_position_id(r["position_id"]), *r["dice"])}
        assert {r["gnubg_best_id"], r["gnubg_money_best_id"]} <= ids


def test_exact_positions_agree_with_gnubg(answers):
    """Inside the two-sided bear-off table both programs have the exact
    probabilities: bgfast's best play at the score is gnubg's in every
    record, and differs from its own money play."""
    exact = [(r, b, m) for r, b, m in answers if r["exact"]]
    wrong = [(r["score"], r["position_id"], r["dice"]) for r, b, _ in exact
             if b != r["gnubg_best_id"]]
    assert not wrong, wrong
    assert sum(b != m for _, b, m in exact) >= len(exact) - 1


def test_agreement_with_gnubg(answers):
    """Races with 15 checkers: the two nets' probabilities differ a little,
    so a few records may differ where gnubg's top two are close.  Measured
    agreement: in docs/cubeful.md; the test holds it to at least 85%, and
    to every record where gnubg's margin is at least 0.02 EMG."""
    same = [b == r["gnubg_best_id"] for r, b, _ in answers]
    assert sum(same) >= 0.85 * len(same), (sum(same), len(same))
    clear = [(r["score"], r["position_id"], r["dice"]) for (r, b, _), s in zip(answers, same)
             if not s and r["gnubg_gap"] >= 0.02]
    assert not clear, clear


@pytest.mark.gnubg
def test_gnubg_live_matches_the_record(gnubg_binary):
    """gnubg itself, run now on one record of each score: its best plays at
    the score and at money are those recorded."""
    picked = list({r["score"]: r for r in RECORDS}.values())
    cases = []
    for r in picked:
        board = Position.from_position_id(r["position_id"]).board
        cases += [(board, r["dice"], _context(r["context"])),
                  (board, r["dice"], CubeContext.money())]
    hints = gnubg_hints(gnubg_binary, cases, timeout=120)
    for k, r in enumerate(picked):
        at_score, money = hints[2 * k], hints[2 * k + 1]
        assert at_score[0][0].position_id() == r["gnubg_best_id"], r
        assert money[0][0].position_id() == r["gnubg_money_best_id"], r
