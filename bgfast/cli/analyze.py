"""``bgfast analyze`` (position files) and ``bgfast analyze-match`` (.mat files)."""
from __future__ import annotations

import functools
import json
import os
import sys

import click

from .._files import atomic_write, bounded_lines, check_writable
from .._progress import Progress
from .._ray import ADDRESS_HELP, JOBS_HELP
from . import emit_json, main
from ._options import SEED, check_ray_address, cubeless_option, given_options, json_option

_COMMON = [
    click.option("--ply", type=click.IntRange(0, 2), default=1, show_default=True,
                 help="Evaluation depth: 1 looks at the 21 replies; 0 is about 20 times "
                      "faster and weaker, 2 stronger and about 20 times slower."),
    click.option("--evaluator", default="net", show_default=True,
                 help="Evaluator name (see bgfast.evaluate.evaluator_names())."),
    cubeless_option("Rank plays by cubeless equity and decide the cube by Janowski's model "
                    "on the n-ply probabilities (the default: cubeful, at the cube and score "
                    "of each position)."),
    click.option("--jobs", "-j", type=click.IntRange(1, 256), default=None, help=JOBS_HELP),
    click.option("--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True),
    click.option("--address", default=None, help=ADDRESS_HELP),
]


def common(fn):
    """The options of both analysis commands (and the check that
    ``--address`` comes with ``--backend ray``)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        check_ray_address(kwargs.get("address"), kwargs.get("backend"))
        return fn(*args, **kwargs)

    for opt in reversed(_COMMON):
        wrapper = opt(wrapper)
    return wrapper


def _count_lines(path) -> int | None:
    """The number of lines of ``path`` (None for stdin), read in pieces."""
    if path == "-":
        return None
    n = 0
    last = b"\n"
    with open(path, "rb") as f:
        for piece in iter(lambda: f.read(1 << 20), b""):
            n += piece.count(b"\n")
            last = piece[-1:]
    return n + (last != b"\n")


@main.command()
@click.argument("input_file", metavar="INPUT", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Output file (default: stdout).")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "html"]), default="jsonl",
              show_default=True)
@click.option("--top", type=click.IntRange(1, 100), default=5, show_default=True,
              help="Plays listed per checker decision.")
@click.option("--rollout", "rollout_games", type=click.IntRange(0), default=0,
              help="Also roll out each position with this many games.")
@click.option("--seed", type=SEED, default=1, show_default=True, help="Seed for rollouts.")
@click.option("--resume", is_flag=True, help="Continue an interrupted run into the same -o file.")
@common
def analyze(input_file, output, fmt, top, rollout_games, seed, resume, ply, evaluator, cubeless,
            jobs, backend, address):
    """Analyse every position in INPUT (one per line: Position ID, Position ID
    with Match ID, or XGID, optionally followed by a roll).

    Checker plays are ranked by their cubeful value at the line's cube and
    score (a Match ID or XGID gives them; a Position ID alone is money with
    a centred cube): cubeful equity for money, MWC at a match, with the
    cubeless equity beside it.  Above --ply 0 the cube decisions come from
    the n-ply cubeful search.  --cubeless gives the cubeless analysis.

    Rows stream out in input order as CSV or JSON Lines; --format html writes
    JSON Lines to OUTPUT.jsonl and an HTML report with board pictures to
    OUTPUT.  Bad lines (also lines over 1024 characters, or not UTF-8 text)
    get an error row with their line number; the exit status is 1 if any
    line failed.  With -o, OUTPUT.resume.json records the settings and the
    input read, and --resume refuses to continue a run with other settings
    or another input.
    """
    from ..analyze import AnalysisSettings, html_report, run

    if not os.path.exists(input_file) and input_file != "-":
        raise click.UsageError(f"input file {input_file!r} does not exist")
    if fmt == "html" and output is None:
        raise click.UsageError("--format html needs -o FILE")
    settings = AnalysisSettings(ply=ply, top=top, evaluator=evaluator,
                                rollout_games=rollout_games, seed=seed, cubeless=cubeless)
    data_path = output + ".jsonl" if fmt == "html" else output
    data_fmt = "jsonl" if fmt == "html" else fmt
    if output is not None:
        check_writable(output, stream=fmt != "html")
    if fmt == "html":                     # written, then read back for the page
        check_writable(data_path)
    stream = click.get_text_stream("stdout") if output is None else None
    with click.open_file(input_file, "r", encoding="utf-8", errors="surrogateescape") as f, \
            Progress(unit="line") as bar:
        if bar.enabled:
            bar(0, _count_lines(input_file))
        counts = run(bounded_lines(f), output=data_path, fmt=data_fmt, settings=settings,
                     jobs=jobs, backend=backend, address=address, resume=resume, stream=stream,
                     progress=bar.update)
    if fmt == "html":
        with open(data_path, encoding="utf-8") as f:
            rows = (json.loads(line) for line in f if line.strip())
            page = html_report(rows, title=f"bgfast analysis of {os.path.basename(input_file)}")
        atomic_write(output, page)
    click.echo(f"{counts['rows']} rows, {counts['errors']} failed"
               + (f" (resumed after line {counts['resumed_after_line']})"
                  if counts["resumed_after_line"] else ""), err=True)
    if counts["errors"]:
        sys.exit(1)


@main.command("analyze-match")
@click.argument("mat_file", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write every decision to this file (CSV, JSON Lines or HTML).")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "html"]), default="jsonl",
              show_default=True)
@json_option("Print the summary as JSON.")
@common
def analyze_match_cmd(mat_file, output, fmt, as_json, ply, evaluator, cubeless, jobs, backend,
                      address):
    """Analyse every checker play and cube decision of both players in a
    gnubg/Jellyfish .mat or gnubg .sgf file, at each decision's cube and
    score: the equity lost on each (EMG: per unit cube for money, the MWC
    lost in normalised equity at a match), flags for doubtful plays, errors
    and blunders, each player's error rates in mEMG per decision, as gnubg
    reports them (checker play, cube, overall), and the luck of his rolls
    (at 0 plies: each roll's best play against the average roll)."""
    import csv
    import io

    from ..analyze import MATCH_FIELDS, AnalysisSettings, analyze_match, html_report, summarize

    if output is not None:
        check_writable(output)
    elif given_options("fmt"):
        raise click.UsageError("--format is the format of the -o file: give -o FILE")
    from ..sgf import load_record

    match = load_record(mat_file)
    settings = AnalysisSettings(ply=ply, evaluator=evaluator, cubeless=cubeless)
    rows = []
    with Progress(len(match.games), unit="game") as bar:
        for row in analyze_match(match, settings=settings, jobs=jobs, backend=backend,
                                 address=address):
            rows.append(row)
            bar(row["game"])
    if output is not None:
        if fmt == "html":
            worst = [dict(r, plays=None, line=f"game {r['game']}, decision {r['decision']}",
                          context=r["name"], best_play=r["best"]) for r in rows if r["flag"]]
            page = html_report(worst, title=f"Biggest errors in {os.path.basename(mat_file)}",
                               key=lambda r: r["loss"], limit=50)
            atomic_write(output, page)
        else:
            buf = io.StringIO()
            if fmt == "csv":
                w = csv.DictWriter(buf, fieldnames=MATCH_FIELDS, lineterminator="\n")
                w.writeheader()
                w.writerows(rows)
            else:
                for r in rows:
                    buf.write(json.dumps(r, separators=(",", ":")) + "\n")
            atomic_write(output, buf.getvalue())
    summary = summarize(rows, match.names)
    summary["match"] = {"length": match.length, "games": len(match.games),
                        "score": list(match.score)}
    if as_json:
        emit_json(summary)
        return
    click.echo(f"{os.path.basename(mat_file)}: {match.length or 'money'} point match, "
               f"{len(match.games)} games, final score {match.score[0]}-{match.score[1]}")
    for s in summary["players"]:
        click.echo(f"  {s['name']:<16} decisions {s['checker_decisions']:4d} checker "
                   f"{s['cube_decisions']:3d} cube  loss {s['total_loss']:7.3f}  "
                   f"error rate (mEMG) {s['error_rate_memg']:6.1f} overall, "
                   f"{s['checker_error_rate_memg']:6.1f} checker, "
                   f"{s['cube_error_rate_memg']:6.1f} cube  "
                   f"doubtful {s['doubtful']} errors {s['error']} blunders {s['blunder']}  "
                   f"luck (mEMG per roll) {s['luck_rate_memg']:+6.1f}")
