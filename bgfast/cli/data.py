"""``bgfast data positions`` and ``bgfast data label``: training data for the net
(:mod:`bgfast.traindata`)."""
from __future__ import annotations

import os
import time

import click

from .._progress import Progress
from . import emit_json, main
from ..rollout import policy_names
from ..traindata import CLASSES
from ._options import SEED, json_option, resumable_options

_POLICIES = policy_names()


def _class_option(help_text: str):
    """The repeatable ``--class`` option of the data commands (the position
    classes of :data:`bgfast.traindata.CLASSES`)."""
    return click.option("--class", "classes", multiple=True,
                        type=click.Choice(CLASSES, case_sensitive=False),
                        help=help_text)


class _Depths(click.ParamType):
    """The look-ahead of ``bgfast data values``: one depth (``2``) or several,
    comma-separated (``1,2``), whose values are averaged."""

    name = "plies"

    def convert(self, value, param, ctx):
        from ..errors import BgfastError
        from ..traindata import value_depths

        if isinstance(value, tuple):
            return value
        try:
            return value_depths(tuple(int(p) for p in str(value).split(",")))
        except (ValueError, BgfastError):
            self.fail(f"{value!r} is not a look-ahead: 1, 2 or 3, or several of them "
                      "separated by commas (1,2)", param, ctx)


@main.group()
def data():
    """Training data: positions from self-play, labelled by rollouts."""


@data.command()
@click.option("-n", "count", type=click.IntRange(min=1), required=True,
              help="Distinct positions to find.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the games and of the order.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="The positions file to write (.bgtd).")
@click.option("--players", default=None,
              help="Players and weights, e.g. net=45,pubeval=20,easy=10,medium=10,"
                   "beginner=10,expert=5 (the default); gnubg needs gnubg-nn.")
@click.option("--exclude", "excludes", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A positions file, or a benchmark's decisions.bgtd, whose positions are "
                   "not taken (repeatable).")
@_class_option("Take only positions of this class (repeatable; default all).")
@click.option("--bearoffs/--no-bearoffs", default=True, show_default=True,
              help="Take bear-offs (every checker of both sides home), which the tables value.")
@click.option("--pool", type=click.IntRange(min=1), default=None,
              help="Find this many positions (at least -n) and keep a seeded random -n of "
                   "them: positions from more games.")
@click.option("--jobs", "-j", type=click.IntRange(1), default=None,
              help="Processes (default: every core); the result does not depend on it.")
@json_option("Print the summary as JSON.")
def positions(count, seed, output, players, excludes, classes, bearoffs, pool, jobs, as_json):
    """Find distinct positions in seeded self-play and write them to OUTPUT,
    each with its class (contact, crashed, race)."""
    import numpy as np

    from .._files import check_writable
    from ..traindata import load_keys, sample_positions, save_positions

    check_writable(output)
    exclude = None
    if excludes:
        exclude = np.concatenate([load_keys(p) for p in excludes])
    t0 = time.monotonic()
    with Progress(pool or count, unit="position", resumes=True) as bar:
        ps = sample_positions(count, seed, players, jobs=jobs, exclude=exclude,
                              classes=[c.lower() for c in classes] or None, bearoffs=bearoffs,
                              pool=pool, progress=bar)
    save_positions(ps, output)
    summary = {"out": output, "positions": len(ps), "classes": ps.class_counts(),
               "sources": ps.source_counts(), "games": ps.meta["games"], "digest": ps.digest,
               "seconds": round(time.monotonic() - t0, 1)}
    if as_json:
        emit_json(summary)
        return
    classes = ", ".join(f"{k} {v}" for k, v in summary["classes"].items())
    click.echo(f"{output}: {len(ps)} positions ({classes}) from "
               f"{sum(summary['games'].values())} games in {summary['seconds']} s")


@data.command()
@click.argument("positions_file", metavar="POSITIONS", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(file_okay=False), required=True,
              help="The labels directory (shard-NNNNNN.bgtd files).")
@click.option("--trials", "-n", type=click.IntRange(1), default=None,
              help="Rollout games per position [default: 72].")
@click.option("--truncate", "-t", type=click.IntRange(0), default=None,
              help="Plies before the net evaluates (0 = play to the end) [default: 11].")
@click.option("--seed", "-s", type=SEED, default=None,
              help="Seed; position i is rolled out with a seed of (seed, i) [default: 1].")
@click.option("--policy", type=click.Choice(_POLICIES, case_sensitive=False), default="net",
              show_default=True, help="Who plays the rollouts.")
@click.option("--evaluator", "-e", default="net", show_default=True,
              help="Evaluator for luck and truncation.")
@_class_option("Label only the positions of this class (repeatable; default all).")
@resumable_options("labels", "Label only the first LIMIT positions.")
@click.option("--shard-size", type=click.IntRange(1), default=4096, show_default=True,
              help="Positions per shard file.")
@json_option("Print the summary as JSON.")
def label(positions_file, output, trials, truncate, seed, policy, evaluator, classes, resume,
          limit, jobs, shard_size, checkpoint_seconds, as_json):
    """Roll out the positions of POSITIONS (a file of 'bgfast data positions')
    and write their labels into the directory OUTPUT, checkpointing as it
    goes; --resume continues an interrupted run with the same files as an
    uninterrupted one."""
    from dataclasses import replace

    from ..traindata import LABEL_SETTINGS, label as run

    fields = {"policy": policy.lower(), "evaluator": evaluator}
    for name, value in (("trials", trials), ("truncate", truncate), ("seed", seed)):
        if value is not None:
            fields[name] = value
    settings = replace(LABEL_SETTINGS, **fields)
    _fill_labels(positions_file, output, limit, classes, as_json, "labelled",
                 lambda ps, bar: run(ps, settings, output, resume=resume, jobs=jobs, limit=limit,
                                     shard_size=shard_size, checkpoint_seconds=checkpoint_seconds,
                                     progress=bar))


def _fill_labels(positions_file, output, limit, classes, as_json, done: str, work) -> None:
    """The body of the commands that fill a labels directory: OUTPUT checked,
    POSITIONS read (only those of ``classes`` when some are named),
    ``work(positions, bar)`` run under a progress bar, and its summary
    printed (``done``: what was done to the positions)."""
    from ..traindata import load_positions, select_classes

    if os.path.exists(output) and not os.path.isdir(output):
        raise click.UsageError(f"{output} is not a directory")
    names = [c.lower() for c in classes]
    ps = select_classes(load_positions(positions_file), names or None)
    if names and not len(ps):
        raise click.UsageError(f"{positions_file} holds no positions of the class "
                               f"{', '.join(names)}")
    with Progress(len(ps) if limit is None else min(limit, len(ps)), unit="position",
                  resumes=True) as bar:
        r = work(ps, bar)
    if as_json:
        emit_json(r)
        return
    click.echo(f"{output}: {r['positions']} positions {done} ({r['labelled']} in this run, "
               f"{r['seconds']} s), {r['shards']} complete shards")


@data.command()
@click.argument("positions_file", metavar="POSITIONS", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(file_okay=False), required=True,
              help="The labels directory (shard-NNNNNN.bgtd files).")
@click.option("--plies", type=_Depths(), default="1", show_default=True,
              help="Look-ahead of the values: 1, 2 or 3, or several separated by commas "
                   "(1,2: the mean of the 1-ply and 2-ply probabilities).")
@click.option("--race-table", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A one-sided 15-checker table (bgfast bearoff build --one-sided P, or "
                   "gnubg's): the races inside it that are not bear-offs get its values.")
@_class_option("Value only the positions of this class (repeatable; default all).")
@resumable_options("values", "Value only the first LIMIT positions.")
@click.option("--shard-size", type=click.IntRange(1), default=4096, show_default=True,
              help="Positions per shard file.")
@json_option("Print the summary as JSON.")
def values(positions_file, output, plies, race_table, classes, resume, limit, jobs, shard_size,
           checkpoint_seconds, as_json):
    """Label the positions of POSITIONS with the net's own n-ply values (the
    net of $BGFAST_NET, else the shipped one) into the directory OUTPUT, as
    'bgfast data label' writes rollouts: targets for 'bgfast train
    supervised' that teach the net to agree with its own look-ahead."""
    from ..traindata import label_values

    depths = "+".join(map(str, plies))
    _fill_labels(positions_file, output, limit, classes, as_json, f"valued at {depths} ply",
                 lambda ps, bar: label_values(ps, plies, output, race_table=race_table,
                                              resume=resume, jobs=jobs,
                                              limit=limit, shard_size=shard_size,
                                              checkpoint_seconds=checkpoint_seconds, progress=bar))
