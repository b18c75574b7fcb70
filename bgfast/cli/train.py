"""``bgfast train`` (TD(lambda) self-play, supervised training on rollout
labels) and ``bgfast duel`` (duplicate-dice money duels)."""
from __future__ import annotations

import click
from click.core import ParameterSource

from .._progress import Progress
from ..duel import MAX_GAMES
from ..net import MAX_HIDDEN
from ..traindata import CLASSES
from . import emit_json, main
from ._options import FloatRange, SEED, given_options, json_option


class _TrainGroup(click.Group):
    """A group whose first argument, when it names no mode, is the TD
    mode's: ``bgfast train OUT --games N`` is ``bgfast train td OUT --games N``."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["td", *args]
        return super().parse_args(ctx, args)


@main.group(cls=_TrainGroup)
def train():
    """Train the net: ``bgfast train OUT --games N`` (TD self-play, the ``td``
    mode) or ``bgfast train supervised LABELS_DIR -o OUT`` (rollout labels)."""


@train.command("td")
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--games", type=click.IntRange(min=0), required=True,
              help="Train until this many self-play games in total.")
@click.option("--hidden", type=click.IntRange(1, MAX_HIDDEN), default=64, show_default=True,
              help="Hidden units of each net (contact, race).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of weights and dice.")
@click.option("--alpha", type=FloatRange(min=0, min_open=True), default=0.1, show_default=True,
              help="Learning rate.")
@click.option("--lambda", "lam", type=FloatRange(0, 1), default=0.5, show_default=True,
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
@click.option("--features", "features", default=None, metavar="GROUP[,GROUP]",
              help="Feature groups to add in a new run (contain, contact, anchors, hits, "
                   "mobility, off): --init's net gets zero weights on them.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@json_option("Print the training state as JSON.")
def train_td(out, games, hidden, seed, alpha, lam, round_games, threads, checkpoint_every, resume,
             init, features, quiet, as_json):
    """Train the net by TD(lambda) self-play and write the weights to OUT (.npz)."""
    import os

    from ..train import train as run

    if resume and os.path.exists(out):
        from ..net import load

        st = load(out).meta.get("train") or {}
        asked = {"--hidden": hidden, "--seed": seed, "--lambda": lam, "--round-games": round_games}
        held = {"--hidden": st.get("hidden"), "--seed": st.get("seed"),
                "--lambda": st.get("lambda"), "--round-games": st.get("round_games")}
        differ = [f"{o} {held[o]}" for o in given_options("hidden", "seed", "lam", "round_games")
                  if held[o] is not None and asked[o] != held[o]]
        if differ:
            raise click.UsageError(f"the run checkpointed in {out} has {', '.join(differ)}: "
                                   "resume it with its settings (--alpha may change)")

    st = run(out, games, hidden=hidden, seed=seed, alpha=alpha, lam=lam,
             round_games=round_games, threads=threads, checkpoint_every=checkpoint_every,
             resume=resume, init=init, features=features, progress=not quiet)
    if as_json:
        emit_json({"out": out, **st})
    else:
        click.echo(f"{out}: {st['games_done']} games, {st['seconds']} s of training")


def _fit_default(name):
    from ..train import FitSettings

    return getattr(FitSettings, name)


@train.command("supervised")
@click.argument("labels", metavar="LABELS_DIR...", nargs=-1, required=True,
                type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
              help="The weights file to write (.npz); its checkpoint is OUT.ckpt.")
@click.option("--init", default="shipped", show_default=True,
              help="Start from: shipped (the shipped net), random (seeded), or a weights file PATH.")
@click.option("--epochs", type=click.IntRange(min=1), default=_fit_default("epochs"),
              show_default=True, help="At most this many passes over the training labels.")
@click.option("--patience", type=click.IntRange(min=1), default=_fit_default("patience"),
              show_default=True, help="Stop after this many epochs without a lower validation loss.")
@click.option("--batch", type=click.IntRange(min=1), default=_fit_default("batch"),
              show_default=True, help="Positions per Adam step.")
@click.option("--lr", type=FloatRange(min=0, min_open=True), default=_fit_default("lr"),
              show_default=True, help="Adam learning rate.")
@click.option("--l2", type=FloatRange(min=0), default=_fit_default("l2"), show_default=True,
              help="L2 penalty on the weights.")
@click.option("--l2-anchor", type=click.Choice(["zero", "init"]), default=_fit_default("l2_anchor"),
              show_default=True, help="The L2 penalty pulls the weights towards zero or towards "
                                      "the initial net's.")
@click.option("--weighting", type=click.Choice(["plain", "stderr"]),
              default=_fit_default("weighting"), show_default=True,
              help="Weight each output's loss by 1/(stderr^2+eps) (stderr) or not (plain).")
@click.option("--val-fraction", type=FloatRange(0, 1, max_open=True),
              default=_fit_default("val_fraction"), show_default=True,
              help="Fraction of the positions held out for validation (seeded by position).")
@click.option("--seed", type=SEED, default=_fit_default("seed"),
              show_default=True, help="Seed of the split, the batches and random weights.")
@click.option("--hidden", type=click.IntRange(1, MAX_HIDDEN), default=_fit_default("hidden"),
              show_default=True, help="Hidden units with --init random.")
@click.option("--class", "classes", type=click.Choice(CLASSES),
              multiple=True, help="Train on these classes' labels only (repeatable; default all). "
                                  "contact and crashed share the contact net unless the net has "
                                  "a crashed net (--crashed-net).")
@click.option("--features", default=None, metavar="GROUP[,GROUP]",
              help="Feature groups to add to the initial net with zero weights (contain, "
                   "contact, anchors, hits, mobility, off).")
@click.option("--widen-to", type=click.IntRange(0, MAX_HIDDEN), default=None, metavar="H",
              help="Give the initial net H hidden units: the new units get small seeded random "
                   "input weights and zero output weights, so it starts as strong.")
@click.option("--crashed-net", "crashed_net", is_flag=True, default=None,
              help="Give the initial net a crashed net (a copy of its contact net) that the "
                   "crashed positions train alone.")
@click.option("--plan-nets", "plan_nets", is_flag=True, default=None,
              help="Give the initial net the contact plan nets (copies of its contact net, and a "
                   "crashed net if it has none): the contact positions train one net per band "
                   "of the race (the side on roll's lead in pips).")
@click.option("--crashed-sides", "crashed_sides", is_flag=True, default=None,
              help="Give the initial net a crashed net per side crashed (crashed-other, a copy "
                   "of its crashed net, and the plan nets if it has none): the crashed "
                   "positions whose side on roll is crashed and those where only its opponent "
                   "is train a net each.")
@click.option("--keep-shape", "keep_shape", is_flag=True, default=None,
              help="Train only the hidden units and feature groups each trained net reads "
                   "already, and the groups of --features, so that it costs what it cost "
                   "(not with --widen-to).")
@click.option("--class-weight", "class_weights", default=None, metavar="CLASS=W[,CLASS=W]",
              help="Weight each named class's positions by W in the training loss "
                   "(e.g. crashed=3; 1 for the others).")
@click.option("--checkpoint-steps", type=click.IntRange(min=1), default=None,
              help="Also checkpoint every this many steps (always after each epoch).")
@click.option("--resume", is_flag=True,
              help="Continue the run checkpointed in OUT.ckpt (a new run if there is none).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@json_option("Print the report as JSON.")
@click.pass_context
def train_supervised_labels(ctx, labels, out, init, epochs, patience, batch, lr, l2, l2_anchor,
                            weighting, val_fraction, seed, hidden, classes, features, widen_to,
                            crashed_net, plan_nets, crashed_sides, keep_shape, class_weights, checkpoint_steps, resume, quiet,
                            as_json):
    """Train the net on the rollout labels of LABELS_DIR (``bgfast data label``);
    several directories are trained on together."""
    from ..train import fit

    given = {"init": init, "epochs": epochs, "patience": patience, "batch": batch, "lr": lr,
             "l2": l2, "l2_anchor": l2_anchor, "weighting": weighting, "val_fraction": val_fraction, "seed": seed,
             "hidden": hidden, "classes": tuple(classes) or None, "features": features,
             "widen_to": widen_to, "crashed_net": crashed_net or None,
             "plan_nets": plan_nets or None, "crashed_sides": crashed_sides or None,
             "keep_shape": keep_shape or None, "class_weights": class_weights}
    # a resumed run takes the checkpoint's settings: pass only what was typed
    settings = {k: v for k, v in given.items()
                if v is not None and (not resume or k == "classes"
                                      or ctx.get_parameter_source(k) == ParameterSource.COMMANDLINE)}
    r = fit(list(labels), out, resume=resume, progress=not quiet, checkpoint_steps=checkpoint_steps,
            **settings)
    if as_json:
        emit_json({"out": out, **r})
        return
    parts = [f"{name} net: validation loss {n['val_loss_before']} -> {n['val_loss_after']} "
             f"(best epoch {n['best_epoch']} of {n['epochs']}, {n['train']} positions)"
             for name, n in r["nets"].items()]
    click.echo(f"{out}: " + "; ".join(parts) + f"; {r['seconds']} s")
    for name, a in r["after"].items():
        b = r["before"][name]
        if a["n"]:
            click.echo(f"  {name}: {a['n']} held-out positions, equity MAE "
                       f"{b['equity_mae']:.4f} -> {a['equity_mae']:.4f}")


@train.command("one-sided")
@click.argument("positions", metavar="POSITIONS...", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
              help="The weights file to write (.npz): --init's net with the one-sided race net; "
                   "its checkpoint is OUT.ckpt.")
@click.option("--table", required=True, type=click.Path(exists=True, dir_okay=False),
              help="A one-sided table (bgfast bearoff build --one-sided P, P >= --min-points): "
                   "the values of the positions it holds.")
@click.option("--init", default="shipped", show_default=True,
              help="The net that carries the result: shipped or a weights file PATH.")
@click.option("--min-points", type=click.IntRange(6, 17), default=10, show_default=True,
              help="The net values the sides with a checker beyond this point (the race table's points).")
@click.option("--hidden", type=click.IntRange(1, 256), default=128, show_default=True,
              help="Hidden units.")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True,
              help="Rounds, each choosing every roll's best result by the net of the round before.")
@click.option("--iterations", type=click.IntRange(min=1), default=6, show_default=True,
              help="Iterations of targets and training in each round.")
@click.option("--epochs", type=click.IntRange(min=1), default=6, show_default=True,
              help="Passes over the positions in each iteration.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the weights and the batches.")
@click.option("--distributions", type=click.Choice(["2", "3"]), default="3", show_default=True,
              help="3: the rolls to bear off, to the first checker off and out of the other's home "
                   "board (backgammons); 2: the first two, for the sides with no checker there.")
@click.option("--from-init", is_flag=True,
              help="Start from --init's one-sided race net instead of seeded weights.")
@click.option("--resume", is_flag=True,
              help="Continue the run checkpointed in OUT.ckpt (a new run if there is none).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@json_option("Print the report as JSON.")
def train_one_sided(positions, out, table, init, min_points, hidden, rounds, iterations, epochs,
                    seed, distributions, from_init, resume, quiet, as_json):
    """Train the one-sided race net on the race sides of POSITIONS (position
    files, ``bgfast data positions``) beyond --min-points, by value iteration
    from the one-sided --table, and write it with --init's net to OUT."""
    from ..onesided import OneSidedSettings, train as run

    st = OneSidedSettings(min_points=min_points, hidden=hidden, rounds=rounds,
                          iterations=iterations, epochs=epochs, seed=seed,
                          heads=int(distributions), from_init=from_init)
    r = run(out, positions=list(positions), table=table, init=init, settings=st, resume=resume,
            progress=not quiet)
    if as_json:
        emit_json(r)
        return
    last = r["history"][-1]
    click.echo(f"{out}: {r['sides']} sides, {len(r['history'])} iterations, expected rolls "
               f"{last['rolls_residual']} from their targets at the last; {r['seconds']} s")


@main.command()
@click.argument("a")
@click.argument("b")
@click.option("--games", type=click.IntRange(1, MAX_GAMES), default=1000, show_default=True,
              help=f"Games (rounded up to whole duplicate pairs), at most {MAX_GAMES:.0e}.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the dice.")
@click.option("--threads", type=click.IntRange(1, 256), default=None,
              help="Worker threads, at most 256 (default: all cores); the result does not depend on it.")
@json_option("Output JSON.")
def duel(a, b, games, seed, threads, as_json):
    """Cubeless money duel of A against B with duplicate dice.

    A and B: beginner, easy, medium, hard, expert, pubeval, net (net0, net1,
    net2), gnubg (gnubg 0-ply; needs gnubg-nn), bgsage or bgsage@PLIES
    (bgsage's raw net, or with look-ahead; needs bgsage), or a weights file
    PATH.npz[@PLIES].
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
@click.option("--seed", type=SEED, default=1000, show_default=True, help="Seed of the games.")
@click.option("--alpha", type=FloatRange(min=0, min_open=True), default=0.01,
              show_default=True, help="Learning rate.")
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
