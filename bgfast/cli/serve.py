"""``bgfast serve``: the engine as an HTTP JSON API with a web page (:mod:`bgfast.server`)."""
from __future__ import annotations

import socket

import click

from . import fail, main

#: the defaults of bgfast.server (not imported here: it needs the serve extra)
DEFAULT_WORKERS, DEFAULT_MAX_TRIALS = 2, 2_000


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0 for every interface).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: a free port, printed on stderr).")
@click.option("--workers", type=click.IntRange(1, 64), default=DEFAULT_WORKERS, show_default=True,
              help="Worker processes doing the engine's work (each loads the net once).")
@click.option("--max-trials", type=click.IntRange(1, 10_000_000), default=DEFAULT_MAX_TRIALS,
              show_default=True, help="The most trials a /rollout request may ask for.")
def serve(host, port, workers, max_trials):
    """Serve the engine over HTTP: POST /hint, /evaluate, /cube and /rollout
    (JSON in, the --json documents out), GET /board.svg, a web page at /
    and the OpenAPI documentation at /docs.  Needs the serve extra:
    pip install 'bgfast[serve]'.  Stops on Ctrl-C or SIGTERM.

      bgfast serve --port 8000 --workers 2
    """
    try:
        from ..server import serve as run
    except ImportError as exc:
        fail(f"bgfast serve needs the serve extra (pip install 'bgfast[serve]'): {exc}")
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except socket.gaierror as exc:
        raise click.BadParameter(f"cannot resolve {host!r}: {exc.strerror}", param_hint="--host")
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    with sock:
        run(sock, workers=workers, max_trials=max_trials)
