"""``bgfast cube``: the cube decision for a position or 5 probabilities."""
from __future__ import annotations

import click

from . import POSITION_FORMS, PositionParam, emit_json, main
from .. import cube as _cube
from ..met import MatchScore


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


def _context(position, score, length, crawford, money, jacoby, beaver, cube_value, owner):
    """The :class:`bgfast.analyze.Context` to decide at: the one POSITION
    carries (none for --probs), with each explicit option overriding its part."""
    import dataclasses

    from ..analyze import Context

    base = position.context if position is not None else Context()
    if cube_value is not None:  # the value first: a bad one is the error to report
        _cube._check_cube(cube_value, owner or ("centre" if cube_value == 1 else "me"))
    money_given = money or jacoby or beaver
    match_given = length is not None or score is not None or crawford
    if money_given and match_given:
        raise click.UsageError("--money/--jacoby/--beaver are for money games; drop --score/--length")
    ctx = base
    if money_given:
        keep = base.is_money
        ctx = dataclasses.replace(base, length=0, score_me=0, score_opp=0, crawford=False,
                                  jacoby=jacoby or (keep and base.jacoby),
                                  beavers=beaver or (keep and base.beavers))
    elif match_given:
        n = length if length is not None else base.length
        if not n:
            raise click.UsageError("a match needs --length N")
        me, opp = (base.score_me, base.score_opp) if score is None else (None, None)
        if score is not None:
            parsed = MatchScore.parse(score, n)
            me, opp = parsed.score_me, parsed.score_opp
        same = score is None and length is None
        ctx = dataclasses.replace(base, length=n, score_me=me, score_opp=opp,
                                  crawford=crawford or (same and base.crawford),
                                  jacoby=False, beavers=False)
    if cube_value is not None:
        if owner is None:
            owner = "centre" if cube_value == 1 else (None if ctx.owner == "centre" else ctx.owner)
        if owner is None:
            raise click.UsageError(f"a cube at {cube_value} has an owner: give --owner me or --owner opp")
        ctx = dataclasses.replace(ctx, cube=cube_value)
    if owner is not None:
        ctx = dataclasses.replace(ctx, owner=_cube.normalize_owner(owner))
    return ctx


@main.command("cube", epilog=POSITION_FORMS)
@click.argument("position", type=PositionParam(), required=False)
@click.option("--probs", default=None, metavar="W,WG,WB,LG,LB",
              help="The 5 cubeless probabilities of the player on roll (fractions or %).")
@click.option("--score", default=None, metavar="A-B", help="Match score: my points - the opponent's.")
@click.option("--length", type=int, default=None, help="Match length.")
@click.option("--crawford", is_flag=True, help="This is the Crawford game.")
@click.option("--money", is_flag=True, help="Money game (the default without --length).")
@click.option("--jacoby", is_flag=True, help="Money game with the Jacoby rule.")
@click.option("--beaver", "--beavers", "beaver", is_flag=True, help="Money game with beavers.")
@click.option("--cube", "cube_value", type=int, default=None,
              help="Cube value (default: POSITION's, else 1).")
@click.option("--owner", type=click.Choice(["me", "opp", "centre", "center"]), default=None,
              help="Cube owner (default: POSITION's, else centre for a 1-cube).")
@click.option("--table", "table_name", default=None,
              help="Match equity table: a shipped name (default Kazaross-XG2) or the path "
                   "prefix of CSV files written by 'bgfast met --generate --output'.")
@click.option("--efficiency", type=float, default=None,
              help="Cube efficiency (default: by position class; 0.68 with --probs).")
@click.option("--evaluator", default="net", show_default=True,
              help="bgfast.evaluate evaluator for POSITION outside the bear-off tables.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def cube_command(position, probs, score, length, crawford, money, jacoby, beaver, cube_value, owner,
                 table_name, efficiency, evaluator, as_json):
    """Cube decision: no double, double/take, double/pass equities and the action.

    Give a POSITION or --probs.  An XGID or Match ID brings its cube, score
    and Crawford flag; --score, --length, --crawford, --money, --jacoby,
    --beaver, --cube and --owner override them.  Examples:

      bgfast cube --probs 0.70,0.20,0.01,0.05,0.002 --money

      bgfast cube --probs 0.7,0.2,0.01,0.05,0 --score 2-4 --length 7 --cube 2 --owner me
    """
    if (position is None) == (probs is None):
        raise click.UsageError("give either a POSITION or --probs (exactly one)")
    ctx = _context(position, score, length, crawford, money, jacoby, beaver, cube_value, owner)
    if table_name is not None and ctx.is_money:
        raise click.UsageError("--table needs a match (--score A-B --length N)")

    exact = None
    pos = None if position is None else position.position
    if probs is not None:
        p = _parse_probs(probs)
        source = "given"
    else:
        p, source, exact = position_probabilities(pos, evaluator)
    match = None if ctx.is_money else MatchScore(ctx.length, ctx.score_me, ctx.score_opp,
                                                 crawford=ctx.crawford)
    rules = _cube.MoneyRules(jacoby=ctx.jacoby, beavers=ctx.beavers) if ctx.is_money else None
    dec = _cube.cube_decision(p, cube=ctx.cube, owner=ctx.owner, match=match, money=rules,
                              met=table_name, efficiency=efficiency, position=pos,
                              exact_money=exact)
    if as_json:
        doc = dec.to_dict()
        doc["source"] = source
        if pos is not None:
            doc["position_id"] = pos.position_id()
        emit_json(doc)
    else:
        click.echo(dec.describe(source))
