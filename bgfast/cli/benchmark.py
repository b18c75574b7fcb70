"""``bgfast benchmark build`` and ``bgfast benchmark score``: the checker-play
benchmark (:mod:`bgfast.benchmark`)."""
from __future__ import annotations

import os

import click

from .._progress import Progress
from . import emit_json, main
from ._options import FloatRange, SEED, json_option, resumable_options
from ..benchmark import SETS


@main.group()
def benchmark():
    """A checker-play benchmark: decisions whose candidate plays are rolled
    out, and the error rate of an evaluator on them."""


@benchmark.command()
@click.option("-o", "--output", type=click.Path(file_okay=False), required=True,
              help="The benchmark directory (decisions.bgtd and shard-NNNNNN.bgtd files).")
@click.option("--set", "sets", multiple=True, type=click.Choice(SETS, case_sensitive=False),
              help="A set to build (repeatable; default: all three).")
@click.option("--decisions", "-n", type=click.IntRange(1), default=300, show_default=True,
              help="Decisions per set.")
@click.option("--trials", type=click.IntRange(1), default=None,
              help="Rollout games per candidate [default: 144].")
@click.option("--truncate", "-t", type=click.IntRange(0), default=None,
              help="Plies before the net evaluates (0 = play to the end) [default: 0].")
@click.option("--seed", "-s", type=SEED, default=None,
              help="Seed of the decisions and the rollouts [default: 21].")
@click.option("--players", default=None,
              help="Self-play players and weights [default: net=45,pubeval=20,easy=10,medium=10,"
                   "beginner=10,expert=5,gnubg=10; gnubg only where gnubg-nn is installed].")
@click.option("--exclude", "excludes", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A positions file (the training data) whose positions are never used "
                   "(repeatable).")
@click.option("--margin", type=FloatRange(min=0), default=None,
              help="Candidates: the plays within this equity of the 0-ply best [default: 0.12].")
@click.option("--max-candidates", type=click.IntRange(2, 255), default=None,
              help="Most candidates rolled out per decision [default: 8].")
@resumable_options("benchmark", "Roll out only the first LIMIT decisions in this run.")
@json_option("Print the summary as JSON.")
def build(output, sets, decisions, trials, truncate, seed, players, excludes, margin,
          max_candidates, resume, limit, jobs, checkpoint_seconds, as_json):
    """Draw decisions from seeded self-play and roll out their candidate
    plays into the directory OUTPUT, checkpointing as it goes; --resume
    continues an interrupted build with the same files as an uninterrupted
    one."""
    from dataclasses import replace

    from .. import benchmark as bm

    if os.path.exists(output) and not os.path.isdir(output):
        raise click.UsageError(f"{output} is not a directory")
    fields = {}
    for name, value in (("trials", trials), ("truncate", truncate), ("seed", seed)):
        if value is not None:
            fields[name] = value
    settings = replace(bm.REFERENCE_SETTINGS, **fields)
    kw = {}
    if margin is not None:
        kw["margin"] = margin
    if max_candidates is not None:
        kw["max_candidates"] = max_candidates
        kw["min_candidates"] = min(bm.MIN_CANDIDATES, max_candidates)
    names = [s.lower() for s in sets] or None
    bar = Progress(decisions * (len(set(names)) if names else len(SETS)), unit="decision",
                   resumes=True)
    with bar:
        r = bm.build(output, decisions, sets=names, seed=bm.DEFAULT_SEED if seed is None else seed,
                     settings=settings, players=players, exclude=list(excludes) or None,
                     resume=resume, jobs=jobs, limit=limit, checkpoint_seconds=checkpoint_seconds,
                     progress=bar, **kw)
    if as_json:
        emit_json(r)
        return
    classes = ", ".join(f"{k} {v}" for k, v in r["classes"].items() if v)
    click.echo(f"{output}: {r['rolled_out']} of {r['decisions']} decisions ({classes}) rolled out "
               f"({r['in_this_run']} in this run, {r['seconds']} s), {r['shards']} complete shards")


def _chooser_options(weights_default: str):
    """``-e/--evaluator``, ``--weights`` and ``--ply`` of a command that
    takes an evaluator's plays; ``weights_default`` says which net ``-e
    net`` plays without ``--weights``."""
    options = [
        click.option("--evaluator", "-e", default="net", show_default=True,
                     help="net, composite, race, pubeval, ... (see bgfast evaluate)."),
        click.option("--weights", type=click.Path(exists=True, dir_okay=False), default=None,
                     help=f"A weights file for -e net [default: {weights_default}]."),
        click.option("--ply", "-p", "plies", type=click.IntRange(0, 2), default=0,
                     show_default=True, help="Search depth of the evaluator's choice."),
    ]

    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f
    return decorate


def _chooser(evaluator: str, weights, shipped: bool):
    """The evaluator of ``-e`` (with ``--weights`` for the net; without
    them, the shipped net when ``shipped``, else ``$BGFAST_NET``'s)."""
    from ..evaluate import get_evaluator
    from ..net import NetEvaluator, default_weights_path

    if evaluator != "net":
        if weights is not None:
            raise click.UsageError("--weights is for -e net")
        return get_evaluator(evaluator)
    if weights is None:
        return NetEvaluator(default_weights_path()) if shipped else get_evaluator("net")
    return NetEvaluator(weights)


@benchmark.command()
@click.argument("directory", metavar="DIR", type=click.Path(exists=True, file_okay=False))
@_chooser_options("the shipped net, whatever $BGFAST_NET says")
@click.option("--jobs", "-j", type=click.IntRange(1), default=None,
              help="Processes (default: every core); the results do not depend on it.")
@click.option("--checkpoint-seconds", type=FloatRange(min=0, min_open=True),
              default=60.0, show_default=True,
              help="Write the extra plays at least this often.")
@json_option("Print the summary as JSON.")
def extend(directory, evaluator, weights, plies, jobs, checkpoint_seconds, as_json):
    """Roll out the evaluator's plays on the benchmark in DIR that are not
    rolled out yet (neither candidates nor extra plays), with the
    reference's settings and seeds, into DIR/extras.bgtd.  The rollouts play
    $BGFAST_NET's net, which must be the reference's (for the shipped
    benchmarks, data/net/td-net.npz); run it again after an interruption."""
    from .. import benchmark as bm

    ev = _chooser(evaluator, weights, shipped=True)
    db = bm.load(directory)
    bm.require_reference_net(db, directory)
    chosen = bm.evaluator_choices(db, ev, plies)
    bar = Progress(1, unit="play")
    with bar:
        r = bm.extend(directory, chosen, jobs=jobs, checkpoint_seconds=checkpoint_seconds,
                      progress=bar)
    if as_json:
        emit_json({"benchmark": os.fspath(directory), "evaluator": ev.name, "plies": plies, **r})
        return
    click.echo(f"{directory}: {r['rolled_out']} plays of {ev.name} {plies}-ply rolled out "
               f"({r['seconds']} s); {r['extras']} extra plays in all")


@benchmark.command()
@click.argument("directory", metavar="DIR", type=click.Path(exists=True, file_okay=False))
@click.option("--set", "sets", multiple=True, type=click.Choice(SETS, case_sensitive=False),
              help="A set to score (repeatable; default: every set the benchmark holds).")
@_chooser_options("$BGFAST_NET, else the shipped net")
@json_option()
def score(directory, sets, evaluator, weights, plies, as_json):
    """Score an evaluator's plays on the benchmark in DIR: the mean equity
    lost per decision against the rollout best (x1000, gnubg's error rate)
    with its standard error, and the share of decisions where it picks the
    rollout's best play."""
    from .. import benchmark as bm

    ev = _chooser(evaluator, weights, shipped=False)
    db = bm.load(directory)
    res = bm.score_evaluator(db, ev, plies, sets=[s.lower() for s in sets] or None)
    if as_json:
        emit_json({"benchmark": os.fspath(directory), "evaluator": ev.name, "plies": plies,
                   "sets": {k: v.to_dict() for k, v in res.items()}})
        return
    click.echo(f"{ev.name} {plies}-ply on {directory}")
    click.echo(f"{'set':<8} {'decisions':>9} {'error':>8} {'se':>6} {'best':>6} {'outside':>7}")
    for v in res.values():
        click.echo(f"{v.set:<8} {v.decisions:>9} {v.error:>8.2f} {v.se:>6.2f} "
                   f"{100 * v.best:>5.1f}% {v.outside:>7}")
