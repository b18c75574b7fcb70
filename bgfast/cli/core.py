"""Core commands: show, pips, moves, shots."""
from __future__ import annotations

import sys

import click
import numpy as np

from .._files import bounded_lines, line_problem, shorten
from ..errors import BgfastError
from ..formats import format_plays, parse_dice
from ..movegen import legal_plays_batch
from ..position import Position, position_ids
from . import POSITION_FORMS, DiceParam, PositionParam, emit_json, main
from ._options import json_option

POSITION = PositionParam()
DICE = DiceParam()


def position_facts(arg) -> dict:
    """The facts ``show --json`` prints for a :class:`bgfast.cli.PositionArg`."""
    pos = arg.position
    pips = pos.pip_count()
    off = pos.borne_off()
    facts = {
        "position_id": pos.position_id(),
        "xgid": arg.xgid_text(),
        "class": pos.classify().name.lower(),
        "pips": {"on_roll": pips[0], "opponent": pips[1]},
        "borne_off": {"on_roll": off[0], "opponent": off[1]},
    }
    if arg.state is not None:
        facts.update(match_id=arg.state.match_id(), gnubg_id=arg.gnubg_id(),
                     context=arg.context.label,
                     dice=None if arg.dice is None else list(arg.dice))
    return facts


@main.command(epilog=POSITION_FORMS)
@click.argument("position", type=POSITION)
@json_option("Print JSON instead of the diagram.")
@click.option("--svg", "as_svg", is_flag=True, help="Print an SVG picture of the board.")
def show(position, as_json, as_svg):
    """Show POSITION: diagram, pip counts and IDs (with its cube, score and dice)."""
    if as_json and as_svg:
        raise click.UsageError("choose one of --json and --svg")
    if as_svg:
        from ..svg import board_svg

        click.echo(board_svg(position.position))
        return
    facts = position_facts(position)
    if as_json:
        emit_json(facts)
        return
    click.echo(str(position.position))
    if facts["xgid"] is not None:
        click.echo(f" XGID: {facts['xgid']}")
    if position.state is not None:
        click.echo(f" GNUbg ID: {facts['gnubg_id']}")
        dice = "" if position.dice is None else f", dice {position.dice[0]}-{position.dice[1]}"
        click.echo(f" Context: {facts['context']}{dice}")
    click.echo(f" Class: {facts['class']}")


@main.command(epilog=POSITION_FORMS)
@click.argument("position", type=POSITION)
@json_option()
def pips(position, as_json):
    """Pip counts of POSITION: player on roll, then opponent."""
    pos = position.position
    me, opp = pos.pip_count()
    if as_json:
        emit_json({"position_id": pos.position_id(), "on_roll": me, "opponent": opp,
                   "difference": opp - me})
    else:
        click.echo(f"{me} {opp}")


def _plays_object(board, pid: str, dice, results, moves, result_ids) -> dict:
    names = format_plays(board, moves)
    plays = [{"play": name, "position_id": pid} for name, pid in zip(names, result_ids)]
    return {"position_id": pid, "dice": [int(dice[0]), int(dice[1])], "plays": plays}


def _moves_batch(stream, as_json: bool, chunk: int = 2048) -> int:
    """Stream ``POSITION DICE`` lines to JSON Lines (or text); return
    failures.  A line that cannot be read (too long, not UTF-8 text: see
    :mod:`bgfast._files`) is a failure like a bad one."""
    failures = 0
    pending = []  # (line number, position, dice) or (line number, error)

    def flush():
        ok = [p for p in pending if len(p) == 3]
        if ok:
            boards = np.stack([p[1].board for p in ok])
            dice = np.array([p[2] for p in ok], dtype=np.int64)
            offsets, results, moves = legal_plays_batch(boards, dice, validate=False,
                                                        with_moves=True)
            ids = position_ids(results) if len(results) else []
            by_line = {}
            for i, (lineno, pos, d) in enumerate(ok):
                a, b = offsets[i], offsets[i + 1]
                by_line[lineno] = _plays_object(pos, pos.position_id(), d,
                                                results[a:b], moves[a:b], ids[a:b])
        for item in pending:
            if len(item) == 2:
                obj = {"line": item[0], "error": item[1]}
            else:
                obj = by_line[item[0]]
            if as_json:
                emit_json(obj)
            elif "error" in obj:
                click.echo(f"line {obj['line']}: error: {obj['error']}")
            else:
                click.echo(f"{obj['position_id']} {obj['dice'][0]}{obj['dice'][1]}: "
                           + (", ".join(p["play"] for p in obj["plays"]) or "(no legal play)"))
        pending.clear()

    for lineno, line in enumerate(bounded_lines(stream), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        parts = text.split()
        try:
            problem = line_problem(text)
            if problem is not None:
                raise BgfastError(problem)
            if len(parts) != 2:
                raise BgfastError(f"expected 'POSITION DICE', got {len(parts)} fields")
            pending.append((lineno, Position.parse(parts[0]), parse_dice(parts[1])))
        except BgfastError as exc:
            failures += 1
            pending.append((lineno, shorten(str(exc))))
        if len(pending) >= chunk:
            flush()
    flush()
    return failures


@main.command(epilog=POSITION_FORMS)
@click.argument("position", type=POSITION, required=False)
@click.argument("dice", type=DICE, required=False)
@click.option("--input", "input_file", type=click.File("r", encoding="utf-8",
                                                     errors="surrogateescape"),
              help="Read 'POSITION DICE' lines from FILE ('-' for stdin); one result per line.")
@json_option("Print JSON (JSON Lines with --input).")
def moves(position, dice, input_file, as_json):
    """Every legal play of POSITION for DICE (e.g. 31 or 3-1).

    DICE may be left out when POSITION holds a roll (an XGID or Match ID
    with dice); given, it overrides that roll.  Each resulting position is
    given with the opponent on roll.  With --input, bad lines give an error
    object with their line number, the rest still run, and the exit status
    is 1 if any line failed.
    """
    if input_file is not None:
        if position is not None:
            raise click.UsageError("give either POSITION DICE or --input, not both")
        failures = _moves_batch(input_file, as_json)
        if failures:
            click.echo(f"Error: {failures} line(s) failed", err=True)
            sys.exit(1)
        return
    if position is None:
        raise click.UsageError("POSITION and DICE are required (or use --input FILE)")
    if dice is None:
        dice = position.dice
    if dice is None:
        raise click.UsageError("DICE is required: POSITION holds no roll")
    pos = position.position
    offsets, results, mv = legal_plays_batch(pos.board, dice, validate=False, with_moves=True)
    ids = position_ids(results) if len(results) else []
    obj = _plays_object(pos, pos.position_id(), dice, results, mv, ids)
    if as_json:
        emit_json(obj)
        return
    if not obj["plays"]:
        click.echo("No legal play: the turn is lost.")
    width = max((len(p["play"]) for p in obj["plays"]), default=0)
    for i, p in enumerate(obj["plays"], 1):
        click.echo(f"{i:3d}. {p['play']:<{width}}  {p['position_id']}")


@main.command(epilog=POSITION_FORMS)
@click.argument("position", type=POSITION)
@json_option()
def shots(position, as_json):
    """How many of the 36 rolls let the player on roll hit a blot."""
    pos = position.position
    n = pos.shots()
    if as_json:
        emit_json({"position_id": pos.position_id(), "shots": n, "of": 36,
                   "probability": n / 36})
    else:
        click.echo(f"{n}/36")
