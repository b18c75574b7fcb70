"""The engine's advice for one position, in the manner of gnubg's ``hint``.

With a roll, :func:`hint` ranks every legal play, best first, by its
cubeful value at the position's cube and score (money: cubeful equity per
unit of the cube; match: match winning chance, with its normalised money
equivalent, EMG), each with its loss against the best, its cubeless equity
and its five probabilities; ``cubeless=True`` ranks by cubeless equity.  Without a
roll it gives the cube decision of the player on roll at the position's cube
and score: no double, double/take and double/pass with the proper action,
valued by the cubeful search at the hint's plies
(:func:`bgfast.evaluate.evaluate_cube`: each side's cube decision at every
node), exactly in the two-sided bear-off table, or from a rollout's
probabilities.

A position is given as a Position ID, a ``POSITIONID:MATCHID`` gnubg ID, a
Position ID followed by a Match ID, or an XGID, optionally followed by the
roll (the forms of ``bgfast analyze``).  The Match ID or XGID gives the
cube, the score and the dice; a roll given here replaces theirs.

Values are for the player making the play.  Bear-offs use the exact
two-sided table where it covers the position.  The default
search is 2-ply (the net, with move filtering: 10-120 ms a roll here, on a
busy two-core machine); ``ply=0`` and ``ply=1`` are faster.  ``rollout`` verifies the
answer: the leading plays, or the position itself for a cube decision, are
rolled out (cubeless) with common dice by the net.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .analyze import parse_record
from .cube import CubeContext, decide_cube
from .errors import BgfastError, InvalidDiceError
from .evaluate import PROB_NAMES, evaluate_cube, rank_plays, sourced_probabilities
from .formats import check_dice
from .position import Position, PositionClass, as_board

__all__ = ["Hint", "HintPlay", "hint", "DEFAULT_PLY"]

#: the search depth of a hint unless one is asked for
DEFAULT_PLY = 2


@dataclass(frozen=True)
class HintPlay:
    """One ranked play: its notation, cubeless equity and probabilities for
    the player making it, its cubeful value at the cube and score
    (``cubeful``: money equity per unit of the cube, or EMG at a match;
    ``mwc`` at a match; both None when ranked cubeless), its loss against
    the best in the value it was ranked by, the plies it was searched at,
    and (after a rollout) the rollout's cubeless equity and its standard
    error."""

    rank: int
    play: str
    equity: float
    loss: float
    probs: tuple
    ply: int
    cubeful: float | None = None
    mwc: float | None = None
    rollout_equity: float | None = None
    rollout_stderr: float | None = None

    @property
    def value(self) -> float:
        """What the play is ranked by: ``cubeful`` if set, else ``equity``."""
        return self.equity if self.cubeful is None else self.cubeful

    def to_dict(self) -> dict:
        doc = {"rank": self.rank, "play": self.play, "equity": self.equity, "loss": self.loss,
               **dict(zip(PROB_NAMES, self.probs)), "ply": self.ply}
        if self.cubeful is not None:
            doc["emg" if self.mwc is not None else "cubeful_equity"] = self.cubeful
        if self.mwc is not None:
            doc["mwc"] = self.mwc
        if self.rollout_equity is not None:
            doc["rollout_equity"] = self.rollout_equity
            doc["rollout_stderr"] = self.rollout_stderr
        return doc


@dataclass(frozen=True)
class Hint:
    """The answer of :func:`hint`: ``plays`` (with a roll) or ``cube`` (a
    :class:`bgfast.cube.CubeDecision`, without one)."""

    position: Position
    context: CubeContext
    dice: tuple | None
    ply: int
    evaluator: str
    cubeless: bool = False
    plays: tuple | None = None
    cube: object = None
    source: str = ""
    rollout: dict | None = None

    def to_dict(self) -> dict:
        doc = {"position_id": self.position.position_id(), "context": self.context.label,
               "dice": list(self.dice) if self.dice else None, "evaluator": self.evaluator,
               "ply": self.ply, "source": self.source}
        if self.plays is not None:
            doc["ranked_by"] = self.ranked_by
            doc["plays"] = [p.to_dict() for p in self.plays]
        if self.cube is not None:
            doc["cube"] = self.cube.to_dict()
        if self.rollout is not None:
            doc["rollout"] = self.rollout
        return doc

    @property
    def ranked_by(self) -> str:
        """``cubeless``, ``cubeful`` (money) or ``mwc`` (a match score)."""
        if self.cubeless:
            return "cubeless"
        return "cubeful" if self.context.is_money else "mwc"

    def __str__(self) -> str:
        head = (f"{self.position.position_id()}  {self.context.label}"
                + (f"  roll {self.dice[0]}-{self.dice[1]}" if self.dice else ""))
        lines = [head]
        if self.plays is not None:
            if not self.plays:
                lines.append("no legal play: the roll cannot be played")
                return "\n".join(lines)
            kind = {"cubeless": "cubeless equity", "cubeful": "cubeful equity",
                    "mwc": "match winning chance (EMG beside it)"}[self.ranked_by]
            lines.append(f"{self.evaluator}, {self.ply}-ply, by {kind}, for the player on roll")
            ro = self.plays[0].rollout_equity is not None
            first = {"cubeless": "  equity", "cubeful": " cubeful", "mwc": "     mwc"}[self.ranked_by]
            extra = "" if self.cubeless else "  cubeless" if self.ranked_by == "cubeful" else "     emg"
            lines.append(f"  #  play                     {first}     loss{extra}    win  gammon     bg"
                         "   lose  gammon     bg" + ("   rollout (se)" if ro else ""))
            for p in self.plays:
                w, wg, wb, lg, lb = p.probs
                if self.ranked_by == "mwc":
                    lead, loss = f"{100 * p.mwc:7.2f}%", "" if p.rank == 1 else f"{-100 * p.loss:+.2f}%"
                    side = f"  {p.cubeful:+.4f}"
                else:
                    lead = f"{p.value:+.4f}"
                    loss = "" if p.rank == 1 else f"{-p.loss:+.4f}"
                    side = "" if self.cubeless else f"   {p.equity:+.4f}"
                row = (f"{p.rank:3d}  {p.play:<24} {lead:>8}  {loss:>7}{side}  {100 * w:5.1f}  "
                       f"{100 * wg:6.1f}  {100 * wb:5.1f}  {100 * (1 - w):5.1f}  {100 * lg:6.1f}  "
                       f"{100 * lb:5.1f}")
                if p.rollout_equity is not None:
                    row += f"   {p.rollout_equity:+.4f} ({p.rollout_stderr:.4f})"
                lines.append(row)
            if ro:
                lines.append(f"rollout (cubeless): {self.rollout['trials']} trials each, common dice, seed "
                             f"{self.rollout['seed']}, {self.rollout['policy']} playing")
            return "\n".join(lines)
        lines.append(self.cube.describe(self.source if self.rollout else f"{self.source}, {self.ply}-ply"))
        return "\n".join(lines)


def _record(position, dice, context):
    """(position, dice, context) from the forms :func:`hint` takes."""
    if isinstance(position, str):
        rec = parse_record(position)
        pos, ctx, rec_dice = rec.position, rec.context, rec.dice
    else:
        pos = position if isinstance(position, Position) else Position(as_board(position))
        ctx, rec_dice = CubeContext(), None
    if context is not None:
        ctx = CubeContext.of(context)
    if dice is not None:
        if len(dice) != 2:
            raise InvalidDiceError(f"a roll is two dice, not {tuple(dice)!r}")
        rec_dice = check_dice(*dice)
    return pos, rec_dice, ctx


def hint(position, dice=None, *, context: CubeContext | None = None, ply: int = DEFAULT_PLY,
         evaluator: str = "net", top: int | None = None, rollout: int = 0,
         rollout_plays: int = 4, seed: int = 0, cubeless: bool = False) -> Hint:
    """The ranked plays for ``dice``, or the cube decision without a roll.

    ``position``: a :class:`Position`, a board, or text in any form of
    ``bgfast analyze`` (Position ID, gnubg ID, XGID, with or without a
    Match ID and roll); ``context`` overrides the cube and score the text
    gives.  Plays are ranked at that cube and score (see the module's
    text) unless ``cubeless``.  ``top`` keeps the best plays only.  ``rollout`` > 0 rolls out
    the best ``rollout_plays`` plays (or the position, for a cube decision)
    with that many trials each, common dice and ``seed``, the net playing
    and judging luck; a cubeless list is then ordered by the rollout."""
    if ply not in (0, 1, 2):
        raise BgfastError(f"ply must be 0, 1 or 2, not {ply}")
    if rollout < 0 or rollout > 10_000_000:
        raise BgfastError(f"rollout trials must be 0 .. 10,000,000, not {rollout}")
    pos, dice, ctx = _record(position, dice, context)
    if pos.classify() == PositionClass.OVER:
        raise BgfastError("the game is over in this position: there is nothing to hint")
    if dice is not None:
        return _play_hint(pos, dice, ctx, ply, evaluator, top, rollout, rollout_plays, seed, cubeless)
    return _cube_hint(pos, ctx, ply, evaluator, rollout, seed)


def _rollout_settings(trials: int, seed: int):
    from .rollout import RolloutSettings

    return RolloutSettings(trials=trials, seed=seed, policy="net", evaluator="net")


def _play_hint(pos, dice, ctx, ply, evaluator, top, trials, n_rollout, seed, cubeless) -> Hint:
    cube = None if cubeless else ctx
    ranked = rank_plays(pos, dice[0], dice[1], plies=ply, evaluator=evaluator, cube=cube)
    if top is not None:
        ranked = ranked[:max(1, top)]
    match = cube is not None and cube.score is not None

    def loss(r, best):
        return float(best.mwc - r.mwc) if match else float(best.value - r.value)

    plays = [HintPlay(i, r.play.notation, float(r.equity), loss(r, ranked[0]),
                      tuple(float(v) for v in r.probs), int(r.plies),
                      None if r.cubeful is None else float(r.cubeful),
                      None if r.mwc is None else float(r.mwc))
             for i, r in enumerate(ranked, 1)]
    rollout = None
    if trials and plays:
        from .rollout import rollout as _rollout

        s = _rollout_settings(trials, seed)
        cands = ranked[:max(1, n_rollout)]
        res = _rollout([r.play.position for r in cands], s)
        # each result is for the opponent, now on roll: the mover's equity is its negation
        ro = [(-r.equity, r.stderr["equity"]) for r in res]
        order = list(range(len(cands)))
        if cubeless:           # the rollout's cubeless equity re-ranks a cubeless list
            order.sort(key=lambda k: -ro[k][0])
        out = []
        for rank, k in enumerate(order, 1):
            p = plays[k]
            lost = float(ro[order[0]][0] - ro[k][0]) if cubeless else p.loss
            out.append(dataclasses.replace(p, rank=rank, loss=lost, rollout_equity=float(ro[k][0]),
                                           rollout_stderr=float(ro[k][1])))
        plays = out + plays[len(cands):]
        rollout = {"trials": trials, "seed": seed, "policy": s.policy, "evaluator": s.evaluator,
                   "plays": len(cands), "cubeless": True}
    return Hint(pos, ctx, dice, ply, evaluator, cubeless=cubeless, plays=tuple(plays),
                source=evaluator, rollout=rollout)


def _cube_hint(pos, ctx, ply, evaluator, trials, seed) -> Hint:
    rollout = None
    if trials:
        from .rollout import rollout as _rollout

        r = _rollout(pos, _rollout_settings(trials, seed))
        probs, source, exact = np.asarray(r.probs, dtype=float), f"rollout of {r.games} trials", None
        rollout = r.to_dict()
        dec = decide_cube(pos, ctx, probs, exact)
    else:
        got = sourced_probabilities(pos.board[None], 0, evaluator)
        probs, source, exact = got.probs[0], got.source(0, evaluator), got.exact_money[0]
        if got.exact[0]:      # the bear-off tables: exact probabilities (and money equities)
            dec = decide_cube(pos, ctx, probs, exact)
        else:
            dec = evaluate_cube(pos, ctx, plies=ply, evaluator=evaluator)
    return Hint(pos, ctx, None, ply, evaluator, cube=dec, source=source, rollout=rollout)
