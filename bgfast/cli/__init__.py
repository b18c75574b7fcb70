"""The ``bgfast`` command line (a click group).

Conventions, in the style of sqlite-utils and black:

* data goes to stdout, and every command takes ``--json``;
* messages and progress bars go to stderr;
* exit status 2 for usage errors (bad arguments, bad IDs on the command
  line), 1 for work that failed (for example some lines of a batch);
* errors are one line on stderr, never a traceback.

Commands live in one submodule per area (``core``, ``bearoff``, ``cube``,
``game``, ...), each registering itself on :data:`main`.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import click

from ..errors import BgfastError, WorkerError

__all__ = ["main", "emit_json", "PositionParam", "PositionArg", "POSITION_FORMS", "DiceParam", "fail"]


#: The forms a POSITION argument takes (the epilog of the commands' help).
POSITION_FORMS = ("POSITION is a Position ID, an XGID (XGID=...), PositionID:MatchID or a "
                  "FIBS board (board:...); the XGID, Match ID and FIBS board bring their "
                  "cube, score and dice, and explicit options override them.")


@dataclass(frozen=True)
class PositionArg:
    """A POSITION from the command line: the position and the context its
    form carries.

    ``position`` is seen from the player on roll; ``state`` is the
    :class:`bgfast.formats.MatchState` of an XGID, a ``PositionID:MatchID`` or a FIBS board
    (None for a bare Position ID: money, centred cube, no dice); ``xgid``
    the parsed XGID, if that was the form (its beaver bit and cube limit).
    """

    text: str
    position: "Position"  # noqa: F821
    state: "MatchState | None" = None  # noqa: F821
    xgid: "XGID | None" = None  # noqa: F821

    @property
    def dice(self) -> tuple | None:
        """The rolled dice the ID holds, or None."""
        return None if self.state is None else self.state.dice

    def cube_context(self, met=None) -> "CubeContext":  # noqa: F821
        """The :class:`bgfast.cube.CubeContext` of the player on roll (money
        with a centred cube for a bare Position ID); ``met`` is a match's
        equity table (default: the default table)."""
        from ..cube import CubeContext

        if self.state is None:
            return CubeContext()
        return CubeContext.from_match_state(self.state, self.xgid, met=met)

    @property
    def context(self) -> "CubeContext":  # noqa: F821
        """The cube and score for the player on roll (:meth:`cube_context`)."""
        return self.cube_context()

    def xgid_text(self) -> str | None:
        """The XGID of the position with its context (None when the state has
        no XGID: a finished game or a pending resignation)."""
        from ..formats import XGID

        if self.state is None:
            return self.position.xgid()
        try:
            return XGID.from_match_state(self.position, self.state, beaver=self.context.rules.beavers,
                                         max_cube=10 if self.xgid is None else self.xgid.max_cube
                                         ).format()
        except BgfastError:
            return None

    @classmethod
    def parse(cls, text: str) -> "PositionArg":
        """A POSITION in any form bgfast reads (:func:`bgfast.formats.parse_position_text`);
        raises its :class:`bgfast.errors.BgfastError`."""
        from ..formats import parse_position_text

        pos, state, xgid = parse_position_text(text)
        return cls(text.strip(), pos, state, xgid)

    def gnubg_id(self) -> str | None:
        """``PositionID:MatchID`` (None for a bare Position ID)."""
        return None if self.state is None else f"{self.position.position_id()}:{self.state.match_id()}"


class PositionParam(click.ParamType):
    """A POSITION in any form bgfast reads -> :class:`PositionArg`: a gnubg
    Position ID, an XGID (``XGID=...``), ``PositionID:MatchID`` or a FIBS
    board string (``board:...``) (:func:`bgfast.formats.parse_position_text`)."""

    name = "POSITION"

    def convert(self, value, param, ctx):
        if isinstance(value, PositionArg):
            return value
        try:
            return PositionArg.parse(value)
        except BgfastError as exc:
            self.fail(str(exc), param, ctx)


class DiceParam(click.ParamType):
    """Dice as ``31`` or ``3-1`` -> a tuple ``(3, 1)``."""

    name = "DICE"

    def convert(self, value, param, ctx):
        from ..formats import parse_dice

        if isinstance(value, tuple):
            return value
        try:
            return parse_dice(value)
        except BgfastError as exc:
            self.fail(str(exc), param, ctx)


def emit_json(obj) -> None:
    """Write one JSON document (one line) to stdout."""
    click.echo(json.dumps(obj, separators=(", ", ": ")))


def fail(message: str, code: int = 1) -> "NoReturn":  # noqa: F821
    """Print one line on stderr and exit with ``code``."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


class _Group(click.Group):
    """A group that reports every error as one stderr line, never a traceback.

    Usage errors (click's and bad IDs/dice/positions) exit with status 2.
    """

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BgfastError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(2)
        except WorkerError as exc:                # failed work, not bad input
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(1)
        except (BrokenPipeError, KeyboardInterrupt):
            ctx.exit(1)
        except OSError as exc:                    # a file that could not be read or written
            click.echo(f"Error: {exc.strerror or exc}"
                       + (f": {exc.filename}" if exc.filename else ""), err=True)
            ctx.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bgfast")
def main():
    """bgfast: a fast backgammon analysis engine."""


# Register the command areas (each module adds its commands to ``main``).
from . import core, bearoff, met, cube, game, evaluate, hint, rollout, train, analyze, data, benchmark, serve  # noqa: E402,F401,E501
