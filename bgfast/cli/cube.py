"""``bgfast cube``: the cube decision for a position or 5 probabilities."""
from __future__ import annotations

import click

from . import POSITION_FORMS, PositionParam, emit_json, main
from .. import cube as _cube
from ._options import FloatRange, context_options, json_option


def _parse_probs(text: str):
    parts = [s for s in text.replace(";", ",").replace(" ", ",").split(",") if s]
    try:
        values = [float(s.rstrip("%")) for s in parts]
    except ValueError:
        raise click.BadParameter(f"expected 5 numbers W,WG,WB,LG,LB, not {text!r}",
                                 param_hint="--probs") from None
    if len(values) != 5:
        raise click.BadParameter(f"expected 5 numbers W,WG,WB,LG,LB, got {len(values)}",
                                 param_hint="--probs")
    if "%" in text or any(v > 1.0 for v in values):  # percentages
        values = [v / 100.0 for v in values]
    return values


def position_probabilities(position, evaluator: str = "net"):
    """Probabilities for a position, from the best source available
    (:func:`bgfast.evaluate.sourced_probabilities`: the bear-off tables in
    bear-offs, exact cubeful money equities from the two-sided one, else
    the evaluator; a finished game its result, by the evaluator).  Returns
    ``(probs, source, exact_money)``; ``exact_money`` is (centred, owned,
    opponent owns), the roller not doubling now, or None."""
    import numpy as np

    from ..evaluate import get_evaluator, sourced_probabilities

    got = sourced_probabilities(position.board[None], 0, evaluator)
    probs, exact = got.probs[0], got.exact_money[0]
    if not got.exact[0]:
        if np.isnan(probs).any():                   # a finished game
            probs = get_evaluator(evaluator).evaluate(position).probs
        return [float(v) for v in probs], f"bgfast.evaluate ({evaluator})", None
    if np.isfinite(exact).all():
        return ([float(v) for v in probs], "bgfast.bearoff (exact two-sided table)",
                [float(v) for v in exact])
    return [float(v) for v in probs], "bgfast.bearoff (one-sided race tables)", None


@main.command("cube", epilog=POSITION_FORMS)
@click.argument("position", type=PositionParam(), required=False)
@click.option("--probs", default=None, metavar="W,WG,WB,LG,LB",
              help="The 5 cubeless probabilities of the player on roll: fractions, or "
                   "percentages (read as such when one ends in % or any is above 1).")
@context_options(table=True)
@click.option("--efficiency", type=FloatRange(0, 1), default=None,
              help="Cube efficiency (default: by position class; 0.68 with --probs).")
@click.option("--evaluator", default="net", show_default=True,
              help="bgfast.evaluate evaluator for POSITION outside the bear-off tables.")
@click.option("--ply", "-p", type=click.IntRange(0, 2), default=0, show_default=True,
              help="Depth of POSITION's decision: 0 (the cube model on the evaluator's "
                   "probabilities) or 1, 2 (the n-ply cubeful search: each side's cube "
                   "decision at every node).")
@json_option()
def cube_command(position, probs, context, efficiency, evaluator, ply, as_json):
    """Cube decision: no double, double/take, double/pass equities and the action.

    Give a POSITION or --probs.  An XGID or Match ID brings its cube, score
    and Crawford flag; --score, --length, --crawford, --post-crawford,
    --money, --jacoby, --beaver, --cube and --owner override them.  --ply 1
    or 2 decides by the n-ply cubeful search (no double and double/take
    valued with each side's cube decision at every node), as gnubg's n-ply
    cube analysis.  Examples:

      bgfast cube --probs 0.70,0.20,0.01,0.05,0.002 --money

      bgfast cube --probs 0.7,0.2,0.01,0.05,0 --score 2-4 --length 7 --cube 2 --owner me
    """
    if (position is None) == (probs is None):
        raise click.UsageError("give either a POSITION or --probs (exactly one)")

    if ply and probs is not None:
        raise click.UsageError("--ply searches from a POSITION; --probs are decided at 0 plies")
    if ply and efficiency is not None:
        raise click.UsageError("--efficiency is for the 0-ply decision; the search uses each "
                               "position's own")
    pos = None if position is None else position.position
    dec, source = decide(pos, context, probs=None if probs is None else _parse_probs(probs),
                         efficiency=efficiency, evaluator=evaluator, ply=ply)
    if as_json:
        emit_json(decision_doc(dec, context, ply, source, pos))
    else:
        click.echo(dec.describe(source))


def decide(pos, context, *, probs=None, efficiency=None, evaluator: str = "net", ply: int = 0):
    """The cube decision of ``bgfast cube`` -> ``(decision, source)``: for ``pos``
    (the n-ply cubeful search at ``ply`` > 0; else the cube model on its
    probabilities) or for the 5 ``probs`` given, at ``context``."""
    exact = None
    if ply:
        from ..evaluate import evaluate_cube

        dec = evaluate_cube(pos, context, plies=ply, evaluator=evaluator)
        return dec, f"bgfast.evaluate ({evaluator}), {ply}-ply cubeful search"
    if probs is not None:
        p, source = probs, "given"
    else:
        p, source, exact = position_probabilities(pos, evaluator)
    dec = _cube.cube_decision(p, **context.decision_args(), efficiency=efficiency,
                              position=pos, exact_money=exact)
    return dec, source


def decision_doc(dec, context, ply: int, source: str, pos=None) -> dict:
    """The ``--json`` document of ``bgfast cube``."""
    doc = dec.to_dict()
    doc["context"] = context.to_dict()
    doc["plies"] = ply
    doc["source"] = source
    if pos is not None:
        doc["position_id"] = pos.position_id()
    return doc
