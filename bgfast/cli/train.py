"""``bgfast train`` (TD(lambda) self-play) and ``bgfast duel`` (duplicate-dice money duels)."""
from __future__ import annotations

import click

from .._progress import Progress
from . import emit_json, main
from ._options import json_option


@main.command()
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--games", type=click.IntRange(min=0), required=True,
              help="Train until this many self-play games in total.")
@click.option("--hidden", type=click.IntRange(1, 256), default=64, show_default=True,
              help="Hidden units of each net (contact, race).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of weights and dice.")
@click.option("--alpha", type=float, default=0.1, show_default=True, help="Learning rate.")
@click.option("--lambda", "lam", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="TD lambda.")
@click.option("--round-games", type=click.IntRange(min=1), default=16, show_default=True,
              help="Games played in parallel with the same weights.")
@click.option("--threads", type=click.IntRange(1, 256), default=None,
              help="Worker threads, at most 256 (default: all cores); the result does not depend on it.")
@click.option("--checkpoint-every", type=click.IntRange(min=1), default=50_000, show_default=True,
              help="Games between checkpoints (written to OUT).")
@click.option("--resume", is_flag=True, help="Continue the run checkpointed in OUT (a new run if OUT does not exist).")
@click.option("--init", "init", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Start from these weights instead of random ones (a net of the previous "
                   "input layout, without features, gets zero feature weights).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@json_option("Print the training state as JSON.")
def train(out, games, hidden, seed, alpha, lam, round_games, threads, checkpoint_every, resume,
          init, quiet, as_json):
    """Train the net by TD(lambda) self-play and write the weights to OUT (.npz)."""
    from ..train import train as run

    st = run(out, games, hidden=hidden, seed=seed, alpha=alpha, lam=lam,
             round_games=round_games, threads=threads, checkpoint_every=checkpoint_every,
             resume=resume, init=init, progress=not quiet)
    if as_json:
        emit_json({"out": out, **st})
    else:
        click.echo(f"{out}: {st['games_done']} games, {st['seconds']} s of training")


@main.command()
@click.argument("a")
@click.argument("b")
@click.option("--games", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Games (rounded up to whole duplicate pairs).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the dice.")
@click.option("--threads", type=click.IntRange(1, 256), default=None,
              help="Worker threads, at most 256 (default: all cores); the result does not depend on it.")
@json_option("Output JSON.")
def duel(a, b, games, seed, threads, as_json):
    """Cubeless money duel of A against B with duplicate dice.

    A and B: beginner, easy, medium, hard, expert, pubeval, net (net0, net1,
    net2), gnubg (needs gnubg-nn), or a weights file PATH.npz[@PLIES].
    """
    from ..duel import duel as run

    with Progress((games + 1) // 2, unit="pair") as bar:
        r = run(a, b, games=games, seed=seed, threads=threads, progress=bar)
    if as_json:
        emit_json(r.to_dict())
    else:
        click.echo(r.text())


@main.command("train-supervised")
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--init", "init", type=click.Path(exists=True, dir_okay=False), required=True,
              help="The net to improve (also the one that plays and evaluates).")
@click.option("--games", type=click.IntRange(min=1), required=True,
              help="Self-play games whose positions are used.")
@click.option("--plies", type=click.IntRange(1, 3), default=1, show_default=True,
              help="Look-ahead of the targets.")
@click.option("--seed", type=int, default=1000, show_default=True, help="Seed of the games.")
@click.option("--alpha", type=float, default=0.01, show_default=True, help="Learning rate.")
@click.option("--epochs", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--quiet", is_flag=True, help="No progress bar.")
@json_option("Print the summary as JSON.")
def train_supervised(out, init, games, plies, seed, alpha, epochs, quiet, as_json):
    """Supervised phase: train the net towards its own look-ahead values."""
    from ..train import supervise

    st = supervise(out, init, games, plies=plies, seed=seed, alpha=alpha, epochs=epochs,
                   progress=not quiet)
    if as_json:
        emit_json({"out": out, **st})
    else:
        click.echo(f"{out}: {st['positions']} positions of {games} games, {st['seconds']} s")
