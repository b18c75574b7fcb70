"""Options shared by the commands: ``--json``, the cube context, ``--cubeless``.

* :func:`json_option` adds ``--json`` (the keyword ``as_json``);
* :func:`context_options` adds ``--money [--jacoby] [--beaver]`` or
  ``--score A-B --length N [--crawford|--post-crawford]``, and ``--cube V
  --owner me|opp|centre`` (with ``table=True`` also ``--table``), and hands
  the command one keyword ``context``: the :class:`bgfast.cube.CubeContext`
  of its POSITION (the one an XGID or Match ID carries; money with a
  centred cube for a bare Position ID or no position) with each explicit
  option overriding its part (:func:`resolve_context`);
* :func:`cubeless_option` adds ``--cubeless`` (the keyword ``cubeless``);
* :func:`resumable_options` adds ``--resume``, ``--limit``, ``--jobs`` and
  ``--checkpoint-seconds`` to a long job that writes into a directory and
  can be stopped and continued;
* :data:`SEED` is the type of every ``--seed`` (0 to 2^64 - 1, the range
  every random process of bgfast takes);
* :class:`FloatRange` is :class:`click.FloatRange` without nan and the
  infinities, the type of every number option;
* :func:`given_options` names the options of a list given on the command
  line (not left at their defaults), for the errors of options that do not
  go together.

A context that cannot occur (an impossible score, a turned cube in the
Crawford game, a cube value that is not a power of 2, ...) is one line on
stderr and exit status 2, as every usage error.
"""
from __future__ import annotations

import functools
import math

import click
from click.core import ParameterSource

from ..cube import CubeContext, MoneyRules, Owner, normalize_owner
from ..met import MatchScore

__all__ = ["json_option", "context_options", "cubeless_option", "resumable_options",
           "resolve_context", "check_ray_address", "given_options", "FloatRange", "SEED", "CONTEXT_OPTION_NAMES"]

#: The seeds a command takes: every random process of bgfast is seeded with
#: an integer of 64 bits without sign.
SEED = click.IntRange(0, 2 ** 64 - 1)


class FloatRange(click.FloatRange):
    """A number in a range (:class:`click.FloatRange`) that is finite: nan
    and the infinities, which compare false with any bound, are refused."""

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return rv

#: The keywords :func:`context_options` takes from the command line (its options' names).
CONTEXT_OPTION_NAMES = ("money", "jacoby", "beaver", "score", "length", "crawford",
                        "post_crawford", "cube_value", "owner")


def json_option(help: str = "Print JSON."):
    """The ``--json`` flag (keyword ``as_json``) with the command's ``help``."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def cubeless_option(help: str = "Cubeless values instead of the values at the cube and score."):
    """The ``--cubeless`` flag (keyword ``cubeless``)."""
    return click.option("--cubeless", is_flag=True, help=help)


def check_ray_address(address: str | None, backend: str) -> None:
    """``--address`` names a Ray cluster: a usage error without ``--backend ray``."""
    if address is not None and backend != "ray":
        raise click.UsageError("--address is the Ray cluster's: give --backend ray")


def given_options(*names: str) -> list[str]:
    """The options (their first long name, e.g. ``--max-cube``) of the
    keywords ``names`` that the current command line gives explicitly."""
    ctx = click.get_current_context()
    flags = {p.name: max(p.opts, key=len) for p in ctx.command.params}
    return [flags[n] for n in names
            if ctx.get_parameter_source(n) not in (ParameterSource.DEFAULT, None)]


def resumable_options(what: str, limit_help: str):
    """``--resume``, ``--limit``, ``--jobs`` and ``--checkpoint-seconds``
    (keywords ``resume``, ``limit``, ``jobs``, ``checkpoint_seconds``) of a
    long job that fills the directory OUTPUT with ``what`` (e.g. "labels");
    ``limit_help`` says what ``--limit`` bounds."""
    options = [
        click.option("--resume", is_flag=True, help=f"Continue the {what} in OUTPUT."),
        click.option("--limit", type=click.IntRange(0), default=None,
                     help=limit_help),
        click.option("--jobs", "-j", type=click.IntRange(1), default=None,
                     help="Processes (default: every core); the results do not depend on it."),
        click.option("--checkpoint-seconds", type=FloatRange(min=0, min_open=True),
                     default=60.0, show_default=True,
                     help="Write the shard being filled at least this often."),
    ]

    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f
    return decorate


def resolve_context(base: CubeContext, *, money: bool = False, jacoby: bool = False,
                    beaver: bool = False, score: str | None = None, length: int | None = None,
                    crawford: bool = False, post_crawford: bool = False,
                    cube_value: int | None = None, owner: str | None = None,
                    met=None) -> CubeContext:
    """``base`` with the context options given overriding their parts.

    ``--money``/``--jacoby``/``--beaver`` make a money game (keeping the
    base's cube and, from a money base, its rules); ``--score``, ``--length``,
    ``--crawford`` and ``--post-crawford`` a match (the base's length and
    score where not given); ``--cube`` and ``--owner`` the cube (a turned
    cube keeps the base's owner unless it is centred).  ``met`` is the match
    equity table of a match context.  Raises :class:`click.UsageError` for
    options that do not go together and the errors of :class:`CubeContext`
    for a context that cannot occur."""
    if cube_value is not None:          # the value first: a bad one is the error to report
        CubeContext(cube_value, owner or ("centre" if cube_value == 1 else "me"))
    money_given = money or jacoby or beaver
    match_given = score is not None or length is not None or crawford or post_crawford
    if money_given and match_given:
        raise click.UsageError("--money/--jacoby/--beaver are for money games; "
                               "drop --score/--length/--crawford/--post-crawford")
    if crawford and post_crawford:
        raise click.UsageError("a game is either the Crawford game or post-Crawford, not both")
    if met is not None and (money_given or (base.is_money and not match_given)):
        raise click.UsageError("--table needs a match (--score A-B --length N)")
    cube, own = base.cube, base.owner
    if cube_value is not None:
        if owner is None:
            owner = ("centre" if cube_value == 1 else
                     None if own == Owner.CENTRE else own.value)
        if owner is None:
            raise click.UsageError(f"a cube at {cube_value} has an owner: "
                                   "give --owner me or --owner opp")
        cube = cube_value
    if owner is not None:
        own = Owner(normalize_owner(owner))
    if money_given or (base.is_money and not match_given):
        keep = base.rules if base.is_money else MoneyRules()
        return CubeContext.money(cube, own, jacoby=jacoby or keep.jacoby,
                                 beavers=beaver or keep.beavers)
    base_score = base.score
    n = length if length is not None else (None if base_score is None else base_score.length)
    if not n:
        raise click.UsageError("a match needs --length N")
    if score is not None:
        parsed = MatchScore.parse(score, n)
        me, opp = parsed.score_me, parsed.score_opp
    elif base_score is not None:
        me, opp = base_score.score_me, base_score.score_opp
    else:
        me, opp = 0, 0
    same = score is None and length is None and base_score is not None
    crawford = crawford or (same and base_score.crawford and not post_crawford)
    return CubeContext.match(n, me, opp, cube=cube, owner=own, crawford=crawford,
                             post_crawford=True if post_crawford else None,
                             met=met if met is not None else base.met)


class _CubeValue(click.ParamType):
    """A cube value, or :data:`_ALONE` for a ``--cube`` given without one."""

    name = "integer"

    def convert(self, value, param, ctx):
        if value is _ALONE or isinstance(value, int):
            return value
        try:
            return int(value)
        except ValueError:
            self.fail(f"{value!r} is not a valid integer", param, ctx)


_ALONE = object()


def _position_context(kwargs: dict, met) -> CubeContext:
    """The context of a command's ``position`` (a :class:`bgfast.cli.PositionArg` or None)."""
    arg = kwargs.get("position")
    return CubeContext() if arg is None else arg.cube_context(met)


def context_options(fn=None, *, table: bool = False, base=_position_context,
                    cube_flag: str | None = None):
    """Add the cube-context options to a command and pass it ``context``.

    The base context is ``base(keywords, met)`` (default: the context of
    the command's ``position``, a :class:`bgfast.cli.PositionArg` or None);
    ``table=True`` adds ``--table NAME`` (the match equity table).  A
    command that also has ``--cubeless`` (:func:`cubeless_option`) refuses
    explicit context options beside it.  ``cube_flag`` (a keyword name):
    ``--cube`` may also stand alone, without a value, and the command's
    keyword ``cube_flag`` says whether it did."""
    if fn is None:
        return functools.partial(context_options, table=table, base=base,
                                 cube_flag=cube_flag)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        given = {k: kwargs.pop(k) for k in CONTEXT_OPTION_NAMES}
        if cube_flag:
            kwargs[cube_flag] = given["cube_value"] is _ALONE
            if kwargs[cube_flag]:
                given["cube_value"] = None
        met = kwargs.pop("table_name") if table else None
        if kwargs.get("cubeless") and any(given.values()):
            raise click.UsageError("--cubeless takes no cube or score options")
        kwargs["context"] = resolve_context(base(kwargs, met), met=met, **given)
        return fn(*args, **kwargs)

    options = [
        click.option("--money", is_flag=True,
                     help="Money game (the default without a match score)."),
        click.option("--jacoby", is_flag=True, help="Money game with the Jacoby rule."),
        click.option("--beaver", "--beavers", "beaver", is_flag=True,
                     help="Money game with beavers."),
        click.option("--score", default=None, metavar="A-B",
                     help="Match score: my points - the opponent's."),
        click.option("--length", type=click.IntRange(1), default=None, help="Match length."),
        click.option("--crawford", is_flag=True, help="This is the Crawford game."),
        click.option("--post-crawford", is_flag=True,
                     help="A post-Crawford game (a side needs 1 point; the default there "
                          "without --crawford)."),
        click.option("--cube", "cube_value", type=_CubeValue() if cube_flag else int,
                     default=None, **({"is_flag": False, "flag_value": _ALONE} if cube_flag else {}),
                     help="Cube value (default: POSITION's, else 1)."
                          + (" Alone (no value): the cube decision." if cube_flag else "")),
        click.option("--owner", type=click.Choice(["me", "opp", "centre", "center"]),
                     default=None,
                     help="Cube owner (default: POSITION's, else centre for a 1-cube)."),
    ]
    if table:
        options.append(click.option(
            "--table", "table_name", default=None,
            help="Match equity table: a shipped name (default Kazaross-XG2) or the path "
                 "prefix of CSV files written by 'bgfast met --generate --output'."))
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper

