"""``bgfast bearoff``: build, inspect and probe bear-off databases."""
from __future__ import annotations

import re
import time

import click

from .._progress import Progress
from . import PositionParam, emit_json, fail, main
from ._options import FloatRange, given_options, json_option
from ..errors import MissingTableError


@main.group()
def bearoff():
    """Bear-off and race databases (one-sided and two-sided)."""


@bearoff.command("build")
@click.option("--one-sided", "one_sided", type=int, metavar="P",
              help="One-sided (race) table, 15 checkers on P points.")
@click.option("--two-sided", "two_sided", metavar="6xC",
              help="Two-sided table, up to C checkers a side on 6 points.")
@click.option("--checkers", type=click.IntRange(1, 15), default=15, show_default=True,
              help="Checkers of a one-sided table.")
@click.option("--cubeful", is_flag=True, help="Two-sided: add the cubeful equities.")
@click.option("--layout", type=click.Choice(["int16", "float32"]), default=None,
              help="Two-sided value layout (default float32 up to 10 checkers, else int16).")
@click.option("-o", "--output", "output", required=True, type=click.Path(dir_okay=False),
              help="Output file (written atomically).")
@click.option("--threads", type=click.IntRange(1, 256), default=None,
              help="Threads, at most 256 (default: all cores for one-sided builds, 1 for two-sided; "
                   "2 helps a two-sided build on an idle machine).")
@click.option("--checkpoint-seconds", type=FloatRange(min=0), default=60.0,
              show_default=True,
              help="Save the work done to OUTPUT.partial at most this often; a killed build "
                   "run again with the same arguments goes on from there.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@json_option("Print the result as JSON.")
def build(one_sided, two_sided, checkers, cubeful, layout, output, threads, checkpoint_seconds,
          quiet, as_json):
    """Build a database: --one-sided P or --two-sided 6xC.

    The progress bar shows on a terminal only.  The build saves its work to
    OUTPUT.partial every --checkpoint-seconds; run the same command again
    after a crash or kill and it resumes from there, with the same table."""
    from .. import bearoff as bo

    if (one_sided is None) == (two_sided is None):
        raise click.UsageError("give exactly one of --one-sided P and --two-sided 6xC")
    t0 = time.monotonic()
    if one_sided is not None:
        if cubeful or layout:
            raise click.UsageError("--cubeful and --layout are for two-sided tables")
        with Progress(unit=" positions", desc=f"one-sided {one_sided}x{checkers}", quiet=quiet,
                      unit_scale=True) as prog:
            table = bo.build_one_sided(one_sided, checkers, output, progress=prog,
                                       threads=threads, checkpoint_seconds=checkpoint_seconds)
    else:
        if given_options("checkers"):
            raise click.UsageError("--checkers is for one-sided tables (6xC gives a two-sided "
                                   "table's checkers)")
        m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", two_sided)
        if not m:
            raise click.UsageError(f"--two-sided wants 6xC, not {two_sided!r}")
        points, c = int(m.group(1)), int(m.group(2))
        if points != 6:
            raise click.UsageError("two-sided tables are on 6 points")
        with Progress(unit=" pairs", desc=f"two-sided 6x{c}{' cubeful' if cubeful else ''}",
                      quiet=quiet, unit_scale=True) as prog:
            table = bo.build_two_sided(c, output, cubeful=cubeful, layout=layout, progress=prog,
                                       threads=threads, checkpoint_seconds=checkpoint_seconds)
    info = table.info()
    info["seconds"] = round(time.monotonic() - t0, 3)
    table.close()
    if as_json:
        emit_json(info)
    else:
        click.echo(f"wrote {output}: {info['kind']} {info['points']}x{info['checkers']}, "
                   f"{info['positions']:,} positions a side, {info['seconds']} s")


@bearoff.command("info")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--verify", is_flag=True, help="Check the data checksum even for a big file.")
@json_option()
def info(file, verify, as_json):
    """Describe a database file (bgfast or gnubg .bd)."""
    from .. import bearoff as bo

    with bo.open(file, verify=True if verify else None) as table:
        data = table.info()
    if as_json:
        emit_json(data)
    else:
        for k, v in data.items():
            click.echo(f"{k}: {v}")


@bearoff.command("probe")
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("position", type=PositionParam())
@json_option()
def probe(file, position, as_json):
    """Probe POSITION (Position ID or XGID) in FILE."""
    from .. import bearoff as bo

    with bo.open(file) as table:
        try:
            res = table.probe(position.position)
        except MissingTableError as exc:
            fail(str(exc), 1)
    d = res.to_dict()
    if as_json:
        emit_json(d)
        return
    if res.probs is not None:
        w, wg, wbg, lg, lbg = res.probs
        click.echo(f"win {w:.6f}  win gammon {wg:.6f}  lose gammon {lg:.6f}")
    click.echo(f"cubeless equity {res.equity:+.6f}{'' if res.exact else '  (one-sided race estimate)'}")
    if res.cubeful:
        for k, v in res.cubeful.items():
            click.echo(f"cubeful ({k}) {v:+.6f}   no double {res.cubeful_no_double[k]:+.6f}")
