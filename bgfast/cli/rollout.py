"""``bgfast rollout``: cubeful and cubeless rollouts, cube-decision rollouts,
on local cores or a Ray cluster."""
from __future__ import annotations

from dataclasses import replace

import click
from click.core import ParameterSource

from .._progress import Progress
from ..rollout import (DEFAULT_LUCK_PLAYS, MAX_LUCK_PLAYS, MAX_TRIALS, MAX_TRUNCATE, PRESETS,
                       policy_names)
from .._ray import ADDRESS_HELP, JOBS_HELP
from . import POSITION_FORMS, DiceParam, PositionParam, emit_json, main
from ._options import (FloatRange, SEED, check_ray_address, context_options, cubeless_option,
                       json_option)

POSITION = PositionParam()
DICE = DiceParam()


@main.command(epilog=POSITION_FORMS)
@click.argument("position", type=POSITION)
@click.option("--trials", "-n", type=click.IntRange(1, MAX_TRIALS), default=1296,
              show_default=True,
              help=f"Games per position, at most {MAX_TRIALS:.0e} (the maximum with --stderr); "
                   "memory does not grow with them.")
@click.option("--seed", "-s", type=SEED, default=0, show_default=True)
@click.option("--truncate", "-t", type=click.IntRange(0, MAX_TRUNCATE), default=0,
              show_default=True,
              help=f"Evaluate after this many plies, at most {MAX_TRUNCATE} "
                   "(0 = play to the end).")
@click.option("--vr/--no-vr", default=True, show_default=True, help="Luck adjustment.")
@click.option("--quasi/--no-quasi", default=True, show_default=True,
              help="Stratified first two rolls.")
@click.option("--early-stop/--no-early-stop", default=True, show_default=True,
              help="Stop with exact values inside the two-sided bear-off table.")
@click.option("--luck-plays", type=click.IntRange(0, MAX_LUCK_PLAYS), default=None,
              help="With --vr and a net level as the policy: value each roll's luck at the "
                   "net's best of the K plays pubeval scores best (0: of every play, gnubg's "
                   f"scheme).  Default: {DEFAULT_LUCK_PLAYS} for a 0-ply policy, else 0.")
@click.option("--policy", type=click.Choice(policy_names(), case_sensitive=False),
              default="net", show_default=True,
              help="Who plays: a computer level (net = the net at 0-ply; hard and expert "
                   "search 1 and 2 plies, net1 .. net3 the net at 1 .. 3 plies), pubeval "
                   "(about 10x faster, much weaker) or the best equity by --evaluator.")
@click.option("--preset", type=click.Choice(list(PRESETS), case_sensitive=False), default=None,
              help="Named settings: " + "; ".join(f"{p.name}: {p.description}"
                                                  for p in PRESETS.values())
                   + ".  Options given with it override the preset's.")
@click.option("--evaluator", "-e", default="net", show_default=True,
              help="Evaluator for luck, truncation and the evaluator policy: net (with "
                   "the bear-off tables), composite (tables + pubeval, faster, weaker), "
                   "pubeval or a registered kernel evaluator.")
@click.option("--stderr", "stderr_target", type=FloatRange(min=0, min_open=True), default=None,
              help="Stop once the equity's standard error is at most this (cubeful: the "
                   "cubeful equity's or EMG's).")
@click.option("--dice", "-d", type=DICE, default=None,
              help="Roll out every play of this roll (common dice) instead (default: the "
                   "roll POSITION holds, if any; --dice overrides it).")
@click.option("--all-rolls", is_flag=True,
              help="Roll out the policy's play for each of the 21 rolls (common dice).")
@click.option("--max-plays", type=click.IntRange(1), default=None,
              help="With --dice: only the best plays by 0-ply ranking.")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=None, help=JOBS_HELP)
@click.option("--backend", type=click.Choice(["local", "serial", "ray"]), default="local",
              show_default=True)
@click.option("--address", default=None, help=ADDRESS_HELP)
@context_options(table=True, cube_flag="cube_decision")
@cubeless_option("A cubeless rollout instead of the cubeful one.")
@json_option()
def rollout(position, trials, seed, truncate, vr, quasi, early_stop, luck_plays, policy, preset,
            evaluator, stderr_target, dice, all_rolls, max_plays, jobs, backend, address, as_json,
            context, cube_decision, cubeless):
    """Roll out POSITION and print the 5 probabilities and the cubeless
    equity for the player on roll and, in a cubeful rollout, the cubeful
    equity (money) or the MWC and its EMG (match), with standard errors.

    A rollout is cubeful, the cube played by both sides, at the cube and
    score of an XGID or Match ID, or of the context options given (money
    with a centred cube for a bare Position ID); --cubeless rolls out
    cubeless.  A
    POSITION with a roll (an XGID or Match ID with dice) rolls out the
    plays of that roll.  --cube without a value rolls out the cube
    decision instead: no double and double/take with common dice.

    --preset NAME takes a named setting (trials, truncation, policy,
    variance reduction, quasi-random dice, bear-off stop, luck plays);
    --trials, --truncate, --policy, --evaluator, --vr/--no-vr,
    --quasi/--no-quasi, --early-stop/--no-early-stop and --luck-plays given
    beside it override the preset's."""
    from ..rollout import (RolloutSettings, rollout as run, rollout_cube, rollout_opening_rolls,
                           rollout_plays)

    if cube_decision and (cubeless or dice is not None or all_rolls):
        raise click.UsageError("--cube alone rolls out the cube decision: drop "
                               "--cubeless, --dice and --all-rolls")
    if all_rolls and dice is not None:
        raise click.UsageError("--all-rolls rolls out each of the 21 rolls: drop --dice")
    if max_plays is not None and (all_rolls or cube_decision
                                  or (dice is None and position.dice is None)):
        raise click.UsageError("--max-plays goes with the plays of one roll (--dice, or a "
                               "POSITION with a roll)")
    check_ray_address(address, backend)
    cubeful = cube_decision or not cubeless
    given = {"trials": trials, "truncate": truncate, "variance_reduction": vr,
             "quasi_random": quasi, "early_stop": early_stop, "policy": policy.lower(),
             "evaluator": evaluator, "luck_plays": luck_plays}
    if preset is not None:
        # the preset's settings, but for the options given on the command line
        ctx = click.get_current_context()
        params = {"trials": "trials", "truncate": "truncate", "variance_reduction": "vr",
                  "quasi_random": "quasi", "early_stop": "early_stop", "policy": "policy",
                  "evaluator": "evaluator", "luck_plays": "luck_plays"}
        given = {k: v for k, v in given.items()
                 if ctx.get_parameter_source(params[k]) not in (ParameterSource.DEFAULT, None)}
        s = RolloutSettings.from_preset(preset.lower(), **given)
    else:
        s = RolloutSettings(**given)
    s = replace(s, seed=seed, stderr_target=stderr_target, jobs=jobs, backend=backend,
                address=address, cube=context if cubeful else None)
    if dice is None and not all_rolls and not cube_decision:
        dice = position.dice
    position = position.position
    if cube_decision:
        with Progress(None if stderr_target else s.trials, unit=" games", unit_scale=True) as bar:
            res = rollout_cube(position, s, progress=bar if stderr_target is None else
                               (lambda done, _most: bar(done)))
        if as_json:
            emit_json(res.to_dict())
        else:
            click.echo(res.describe())
        return
    # with --stderr the trials are a maximum: the bar counts games, with no end
    with Progress(None if stderr_target else s.trials, unit=" games", unit_scale=True) as bar:
        report = bar if stderr_target is None else (lambda done, _most: bar(done))
        if all_rolls:
            out = rollout_opening_rolls(s, position=position, progress=report)
        elif dice is not None:
            out = rollout_plays(position, dice[0], dice[1], s, max_plays=max_plays,
                                progress=report)
        else:
            out = run(position, s, progress=report)
    where = "cubeless" if s.cube is None else s.cube.describe()
    key = "equity" if s.cube is None else "cubeful"
    if all_rolls:
        rolls, results = out
        w = [1 if a == b else 2 for a, b in rolls]
        avg = sum(k * r.mean[key] for k, r in zip(w, results)) / 36
        if as_json:
            emit_json({"position_id": position.position_id(), "context": _context(s),
                       "average_equity": avg, "rolls": [r.to_dict() for r in results]})
            return
        for r in results:
            click.echo(f"{r.label}  {_value(r)}  win {r.mean['win']:.4f}")
        click.echo(f"average over the 36 rolls: {avg:+.4f} ({where})")
        return
    if dice is not None:
        results = out
        if as_json:
            emit_json({"position_id": position.position_id(), "dice": list(dice),
                       "context": _context(s), "plays": [r.to_dict() for r in results]})
            return
        if not results:
            click.echo("no legal play")
        for i, r in enumerate(results, 1):
            click.echo(f"{i:3d}. {r.label:<28} {_value(r)}  win {r.mean['win']:.4f}"
                       f"  games {r.games}")
        click.echo(f"({where})")
        return
    r = out
    if as_json:
        emit_json(r.to_dict())
        return
    click.echo(f"{'':16}{'mean':>9}{'stderr':>9}")
    names = [k for k in r.mean]
    for k in names:
        label = {"equity": "cubeless equity", "cubeful": "cubeful EMG" if "mwc" in r.mean
                 else "cubeful equity", "mwc": "cubeful MWC"}.get(k, k)
        click.echo(f"{label:<16}{r.mean[k]:9.4f}{r.stderr[k]:9.4f}")
    k = s.effective_luck_plays
    luck = ("" if not s.variance_reduction else
            f", luck from the best of pubeval's {k} plays" if k else ", luck from every play")
    click.echo(f"games {r.games}, {r.average_plies:.1f} plies per game, policy {s.policy}{luck}, "
               f"{where}")


def _context(s) -> dict | str:
    return "cubeless" if s.cube is None else s.cube.to_dict()


def _value(r) -> str:
    """A result's value in a line: the cubeful one (and the cubeless equity) or the cubeless one."""
    if r.cubeful is None:
        return f"{r.equity:+.4f} ± {r.stderr['equity']:.4f}"
    mwc = f"  MWC {r.mwc:.4f} ± {r.stderr['mwc']:.4f}" if r.mwc is not None else ""
    return (f"{r.cubeful:+.4f} ± {r.stderr['cubeful']:.4f}{mwc}  cubeless {r.equity:+.4f}")
