"""``bgfast met``: print, look up, generate and compare match equity tables."""
from __future__ import annotations

import click

from . import emit_json, main
from ._options import FloatRange, given_options, json_option
from .. import met as _met


def _parse_pair(text: str, what: str) -> tuple[int, int]:
    parts = text.replace(",", "-").replace(":", "-").split("-")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise click.BadParameter(f"expected two numbers such as 3-5, not {text!r}", param_hint=what)
    return int(parts[0]), int(parts[1])


def _parse_free_drops(values) -> dict[int, float] | None:
    if not values:
        return None
    out = {}
    for v in values:
        key, sep, val = v.partition("=")
        try:
            out[int(key)] = float(val)
        except ValueError:
            raise click.BadParameter(f"expected AWAY=VALUE such as 2=0.012, not {v!r}",
                                     param_hint="--free-drop") from None
        if not sep:
            raise click.BadParameter(f"expected AWAY=VALUE such as 2=0.012, not {v!r}",
                                     param_hint="--free-drop")
    return out


#: The options of the table generator (``--generate``), by keyword.
_GENERATOR_OPTIONS = ("method", "gammon_rate", "gammon_rate_trailer", "efficiency", "free_drop")


@main.command("met")
@click.option("--table", "table_name", default=_met.DEFAULT_TABLE, show_default=True,
              help=f"Shipped table ({', '.join(_met.TABLE_NAMES)}) or the path prefix "
                   "of CSV files written with --output.")
@click.option("--length", type=int, default=None,
              help="Show scores up to N-away (default 15; the generator's table length, default 25).")
@click.option("--away", default=None, metavar="A-B",
              help="Look up one MWC: I need A points, the opponent B.")
@click.option("--crawford", is_flag=True, help="With --away: this is the Crawford game.")
@click.option("--post-crawford", is_flag=True, help="With --away: a post-Crawford game.")
@click.option("--generate", is_flag=True, help="Compute a table instead of loading one.")
@click.option("--method", type=click.Choice(["janowski", "zadeh"]), default="janowski",
              show_default=True, help="Generator: cube model for pre-Crawford scores.")
@click.option("--gammon-rate", type=FloatRange(0, 1, max_open=True), default=0.30,
              show_default=True,
              help="Generator: fraction of wins that are gammons (the leader's with "
                   "--gammon-rate-trailer).")
@click.option("--gammon-rate-trailer", type=FloatRange(0, 1, max_open=True), default=None,
              help="Generator: the trailer's gammon rate, if different.")
@click.option("--efficiency", type=FloatRange(0, 1), default=0.68, show_default=True,
              help="Generator (janowski): cube efficiency.")
@click.option("--free-drop", "free_drop", multiple=True, metavar="AWAY=VALUE",
              help="Generator: post-Crawford free-drop value, e.g. 2=0.012 (repeatable).")
@click.option("--compare", is_flag=True, help="Show the cell-by-cell difference from Kazaross-XG2.")
@click.option("--output", type=click.Path(file_okay=False), default=None,
              help="Write the table as CSV files into this directory.")
@click.option("--decimal", is_flag=True, help="Print fractions instead of percentages.")
@json_option()
def met_command(table_name, length, away, crawford, post_crawford, generate, method, gammon_rate,
                gammon_rate_trailer, efficiency, free_drop, compare, output, decimal, as_json):
    """Print a match equity table, look up one score, or generate a table.

    Rows are my away score, columns the opponent's.  Examples:

      bgfast met --length 7

      bgfast met --away 3-5

      bgfast met --generate --length 64 --output mytables/ --compare
    """
    if length is not None and length < 1:
        raise click.BadParameter("must be at least 1", param_hint="--length")
    given = given_options(*_GENERATOR_OPTIONS)
    if given and not generate:
        raise click.UsageError(f"{', '.join(given)} set the generator: give --generate")
    if method == "zadeh" and "--efficiency" in given:
        raise click.UsageError("--efficiency is the Janowski model's: drop it with --method zadeh")
    if generate:
        from ..metgen import generate as make_table

        rate = gammon_rate if gammon_rate_trailer is None else (gammon_rate, gammon_rate_trailer)
        table = make_table(length or 25, gammon_rate=rate, method=method,
                           efficiency=efficiency, free_drops=_parse_free_drops(free_drop))
    else:
        table = _met.get_table(table_name)

    if away is not None:
        a, b = _parse_pair(away, "--away")
        if a < 1 or b < 1:
            raise click.BadParameter("away scores must be at least 1", param_hint="--away")
        value = table.mwc(a, b, crawford=crawford, post_crawford=post_crawford)
        if as_json:
            emit_json({"table": table.name, "away": [a, b], "crawford": crawford,
                       "post_crawford": post_crawford, "mwc": value})
        else:
            state = " (Crawford game)" if crawford else " (post-Crawford)" if post_crawford else ""
            click.echo(f"{table.name}: {a}-away vs {b}-away{state}: MWC {100 * value:.2f}%")
        return
    if crawford or post_crawford:
        raise click.UsageError("--crawford and --post-crawford go with --away")

    show = length if (length is not None and not generate) else min(table.max_away, length or 15)
    if show > table.max_away:
        raise _met.MissingTableError(
            f"table {table.name!r} covers up to {table.max_away}-away, not {show}; "
            "use --generate for longer tables")
    if output is not None:
        paths = table.write_csv(output)
        click.echo(f"wrote {paths[0]} and {paths[1]}", err=True)
    comparison = _met.compare(table, None, min(table.max_away, _met.get_table().max_away)) if compare else None

    if as_json:
        doc = table.to_dict(show)
        if comparison is not None:
            doc["compare"] = {k: v for k, v in comparison.items() if k not in ("pre_diff", "post_diff")}
            n = min(show, comparison["length"])
            doc["compare"]["pre_diff"] = [[round(float(v), 6) for v in row]
                                          for row in comparison["pre_diff"][:n, :n]]
            doc["compare"]["post_diff"] = [round(float(v), 6) for v in comparison["post_diff"][:n]]
        emit_json(doc)
        return
    click.echo(table.format(show, percent=not decimal))
    if table.notice and not generate:
        click.echo("")
        click.echo(table.notice.splitlines()[0])
    if comparison is not None:
        c = comparison
        n = min(show, c["length"])
        click.echo("")
        click.echo(f"difference from {c['reference']} (percentage points), up to {n}-away:")
        click.echo(" " * 4 + "".join(f"{j:>6}" for j in range(1, n + 1)))
        for i in range(n):
            click.echo(f"{i + 1:>3} " + "".join(f"{100 * c['pre_diff'][i, j]:>6.2f}" for j in range(n)))
        click.echo(f"post" + "".join(f"{100 * v:>6.2f}" for v in c["post_diff"][:n]))
        click.echo(f"over {c['length']}x{c['length']} cells: max |diff| {100 * c['max_abs']:.2f} "
                   f"at {c['argmax'][0]}-away vs {c['argmax'][1]}-away, mean |diff| "
                   f"{100 * c['mean_abs']:.3f}, rms {100 * c['rms']:.3f}; post-Crawford max "
                   f"{100 * c['post_max_abs']:.2f}")
