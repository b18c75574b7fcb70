"""``bgfast hint``: the ranked plays for a roll, or the cube decision."""
from __future__ import annotations

import click

from . import DiceParam, emit_json, main
from ._options import SEED, context_options, cubeless_option, json_option


def _text_context(kwargs: dict, met):
    """The context the POSITION text of ``bgfast hint`` gives (its Match ID or XGID)."""
    from ..analyze import parse_record

    return parse_record(kwargs["position"]).context

DICE = DiceParam()


@main.command()
@click.argument("position")
@click.argument("dice", type=DICE, required=False)
@click.option("--ply", "-p", type=click.IntRange(0, 2), default=2, show_default=True,
              help="Search depth: 2 (the net with move filtering, up to about 0.1 s a "
                   "roll), or 1 and 0 for faster, weaker answers.")
@click.option("--evaluator", "-e", default="net", show_default=True,
              help="Evaluator (net, composite, pubeval, race, exact).")
@click.option("--top", type=click.IntRange(1), default=None,
              help="List only the best N plays (default: every legal play).")
@click.option("--rollout", "trials", type=click.IntRange(0, 10_000_000), default=0,
              help="Verify by rolling out (common dice, the net playing) with this many "
                   "trials: the best --rollout-plays plays, or the position for a cube "
                   "decision.")
@click.option("--rollout-plays", type=click.IntRange(1, 32), default=4, show_default=True,
              help="How many of the leading plays to roll out.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the rollout's dice.")
@context_options(base=_text_context)
@cubeless_option("Rank the plays by cubeless equity instead of their value at the cube "
                 "and score.")
@json_option()
def hint(position, dice, ply, evaluator, top, trials, rollout_plays, seed, context, cubeless,
         as_json):
    """The engine's advice for POSITION: ranked plays for DICE, or the cube.

    POSITION is a Position ID, a gnubg ID (POSITIONID:MATCHID) or an XGID;
    a Match ID or XGID gives the cube, the score and the dice, and the
    context options (--money, --score/--length, --cube/--owner, ...)
    override its cube and score.  With a roll
    (DICE, or the ID's dice) the legal plays are listed best first by
    their value at the cube and score (cubeful equity for money, match
    winning chance at a match score; --cubeless for cubeless equity), with
    their loss against the best and their probabilities; without one, the
    cube decision of the player on roll.

      bgfast hint 4HPwATDgc/ABMA 31

      bgfast hint 'XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:4:0:9:10'
    """
    from ..hint import hint as make_hint

    h = make_hint(position, dice, context=context, ply=ply, evaluator=evaluator, top=top,
                  rollout=trials, rollout_plays=rollout_plays, seed=seed, cubeless=cubeless)
    if as_json:
        emit_json(h.to_dict())
    else:
        click.echo(str(h))
