"""``bgfast evaluate``: static and n-ply evaluation, play ranking, pubeval calibration."""
from __future__ import annotations

import json as _json

import click

from . import POSITION_FORMS, DiceParam, PositionParam, emit_json, main
from ._options import SEED, context_options, cubeless_option, json_option

POSITION = PositionParam()
DICE = DiceParam()


@main.command(epilog=POSITION_FORMS)
@click.argument("position", type=POSITION)
@click.option("--evaluator", "-e", default="net", show_default=True,
              help="net (bgfast's neural net, exact bear-offs), composite (tables + pubeval), exact, race or pubeval.")
@click.option("--plies", "-p", type=click.IntRange(0, 2), default=0, show_default=True,
              help="Search depth (0, 1 or 2; the 21 rolls averaged per ply).")
@click.option("--dice", "-d", type=DICE, default=None,
              help="Rank the plays of this roll instead of evaluating the position "
                   "(default: the roll POSITION holds, if any; --dice overrides it).")
@context_options
@cubeless_option("Rank the plays by cubeless equity instead of their value at the cube "
                 "and score.")
@json_option()
def evaluate(position, evaluator, plies, dice, context, cubeless, as_json):
    """Evaluate POSITION for the player on roll (cubeless probabilities), or
    rank its plays for a roll: --dice, or the dice an XGID or Match ID holds.

    Plays are ranked by their value at the cube and score: cubeful equity
    per unit of the cube for money, match winning chance (with its EMG) at a
    match score.  The context is POSITION's (an XGID or Match ID; money with
    a centred cube for a Position ID) with the context options overriding
    it; --cubeless ranks by cubeless equity.  Every play shows its cubeless
    equity too."""
    from ..evaluate import PROB_NAMES, get_evaluator, rank_plays

    ev = get_evaluator(evaluator)
    pos = position.position
    if dice is None:
        dice = position.dice
    if dice is not None:
        ranked = rank_plays(pos, dice[0], dice[1], plies=plies, evaluator=ev,
                            cube=None if cubeless else context)
        ranked_by = "cubeless" if cubeless else "cubeful" if context.is_money else "mwc"
        if as_json:
            emit_json(ranking_doc(pos, dice, ev, plies, ranked, None if cubeless else context))
            return
        kind = {"cubeless": "cubeless equity", "cubeful": "cubeful equity",
                "mwc": "match winning chance (EMG, then cubeless equity)"}[ranked_by]
        click.echo(f"by {kind}" + ("" if cubeless else f" at {context.describe()}"))
        if not ranked:
            click.echo("no legal play")
        for i, r in enumerate(ranked, 1):
            probs = " ".join(f"{x:.3f}" for x in r.probs)
            if ranked_by == "mwc":
                value = f"{100 * r.mwc:6.2f}%  {r.cubeful:+.4f}  {r.equity:+.4f}"
            elif ranked_by == "cubeful":
                value = f"{r.cubeful:+.4f}  {r.equity:+.4f}"
            else:
                value = f"{r.equity:+.4f}"
            click.echo(f"{i:3d}. {r.play.notation:<28} {value}  {probs}  ({r.plies}-ply)")
        return
    doc = evaluation_doc(pos, ev, plies)
    if as_json:
        emit_json(doc)
    else:
        click.echo(" ".join(f"{k}={doc[k]:.4f}" for k in PROB_NAMES) + f" equity={doc['equity']:+.4f}")


def ranking_doc(pos, dice, ev, plies: int, ranked, context) -> dict:
    """The ``--json`` document of ``bgfast evaluate --dice``: the plays ``ranked``
    by :func:`bgfast.evaluate.rank_plays` at ``context`` (None: cubeless)."""
    ranked_by = "cubeless" if context is None else "cubeful" if context.is_money else "mwc"
    return {"position_id": pos.position_id(), "dice": list(dice), "evaluator": ev.name,
            "plies": plies, "ranked_by": ranked_by,
            "context": None if context is None else context.to_dict(),
            "plays": [r.to_dict() for r in ranked]}


def evaluation_doc(pos, ev, plies: int) -> dict:
    """The ``--json`` document of ``bgfast evaluate`` without a roll: the cubeless
    probabilities and equity of ``pos`` for the player on roll at ``plies``."""
    from ..evaluate import PROB_NAMES, equity, evaluate_ply

    p = evaluate_ply(pos.board[None], plies, ev)[0]
    return {"position_id": pos.position_id(), "evaluator": ev.name, "plies": plies,
            **{k: float(v) for k, v in zip(PROB_NAMES, p)}, "equity": float(equity(p))}


@main.command("calibrate-pubeval")
@click.option("--games", type=click.IntRange(10), default=20000, show_default=True)
@click.option("--seed", type=SEED, default=20261129, show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the calibration JSON here (default: stdout).")
def calibrate(games, seed, output):
    """Fit pubeval's score -> probabilities map on seeded self-play."""
    from .._files import check_writable, write_output
    from ..train import fit_pubeval_calibration

    if output is not None:
        check_writable(output, "calibration file", stream=True)
    doc = fit_pubeval_calibration(games, seed)
    if output is not None:
        write_output(output, _json.dumps(doc, indent=1))
        click.echo(f"wrote {output}", err=True)
    else:
        emit_json(doc)
