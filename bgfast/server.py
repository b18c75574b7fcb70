"""An HTTP JSON engine API (``bgfast serve``), on FastAPI and uvicorn.

Endpoints (JSON in and out; the documents are those of the CLI's ``--json``):

* ``POST /hint``: the ranked plays for a roll, or the cube decision without
  one (:func:`bgfast.hint.hint`, :meth:`bgfast.hint.Hint.to_dict`);
* ``POST /evaluate``: cubeless probabilities, or the plays of a roll ranked
  at the cube and score (``bgfast evaluate --json``);
* ``POST /cube``: the cube decision (``bgfast cube --json``);
* ``POST /rollout``: a cubeless rollout of the position, or of the plays of
  a roll (``bgfast rollout --json``), at most the server's trial limit;
* ``GET /board.svg?position=...``: the position drawn by :mod:`bgfast.svg`;
* ``GET /health``, ``GET /`` (a page that shows the board and the hint),
  ``GET /docs`` (the OpenAPI documentation).

A position is a Position ID, an XGID or ``PositionID:MatchID``
(:func:`bgfast.formats.parse_position_text`; ``/hint`` also takes the forms
of ``bgfast analyze``: a Position ID and a Match ID, then the roll).  The
cube and score are the ID's, with the request's context fields (``money``,
``jacoby``, ``beaver`` or ``score``, ``length``, ``crawford``,
``post_crawford``; ``cube``, ``owner``) overriding them, as the CLI's
options do (:func:`bgfast.cli._options.resolve_context`).

A bad request (a bad ID, impossible dice, a context that cannot occur, a
rollout above the limit, bad JSON, an unknown field) is answered with status
400 and ``{"error": "<one line>"}``.  The engine's work runs in a pool of
worker processes (``workers``), each loading the evaluator once when it
starts; the event loop only parses requests and waits, so ``/health``
answers while a rollout runs.  Shutting down stops the workers.
"""
from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Literal, Union

import click
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from .cli import PositionArg
from .cube import MAX_CUBE
from .errors import BgfastError

__all__ = ["create_app", "serve", "DEFAULT_MAX_TRIALS", "DEFAULT_WORKERS"]

#: the default trial limit of ``/rollout``
DEFAULT_MAX_TRIALS = 2_000
#: the trials of a ``/rollout`` that gives none (at most the limit)
DEFAULT_TRIALS = 1296
#: the default number of worker processes
DEFAULT_WORKERS = 2
#: the web page served at ``/``
PAGE = Path(__file__).parent / "data" / "server" / "index.html"


Dice = Union[str, list[int], None]


# ---------------------------------------------------------------- requests

class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")

    position: str = Field(description="Position ID, XGID, PositionID:MatchID or FIBS board string.",
                          examples=["4HPwATDgc/ABMA"])


class _Context(_Request):
    """The cube-context fields; each overrides its part of the ID's context."""

    money: bool = Field(False, description="Money game.")
    jacoby: bool = Field(False, description="Money game with the Jacoby rule.")
    beaver: bool = Field(False, description="Money game with beavers.")
    score: str | None = Field(None, description="Match score A-B (mine - the opponent's).")
    length: int | None = Field(None, ge=1, description="Match length.")
    crawford: bool = Field(False, description="The Crawford game.")
    post_crawford: bool = Field(False, description="A post-Crawford game.")
    cube: int | None = Field(None, ge=1, le=MAX_CUBE, description="Cube value (a power of 2).")
    owner: Literal["me", "opp", "centre", "center"] | None = Field(None, description="Cube owner.")

    def context_fields(self) -> dict:
        """The keywords of :func:`bgfast.cli._options.resolve_context`."""
        return {"money": self.money, "jacoby": self.jacoby, "beaver": self.beaver,
                "score": self.score, "length": self.length, "crawford": self.crawford,
                "post_crawford": self.post_crawford, "cube_value": self.cube,
                "owner": self.owner}


class HintRequest(_Context):
    dice: Dice = Field(None, description="The roll (\"31\", \"3-1\" or [3, 1]); without "
                                         "one (and none in the ID) the cube decision.")
    ply: int = Field(2, ge=0, le=2, description="Search depth.")
    evaluator: str = "net"
    top: int | None = Field(None, ge=1, description="Only the best N plays.")
    cubeless: bool = Field(False, description="Rank by cubeless equity.")


class EvaluateRequest(_Context):
    dice: Dice = Field(None, description="Rank the plays of this roll (default: the ID's roll).")
    plies: int = Field(0, ge=0, le=2)
    evaluator: str = "net"
    cubeless: bool = False


class CubeRequest(_Context):
    ply: int = Field(0, ge=0, le=2, description="0: the cube model; 1, 2: the cubeful search.")
    evaluator: str = "net"
    efficiency: float | None = Field(None, ge=0, le=1, allow_inf_nan=False,
                                     description="Cube efficiency 0..1 (0-ply only).")


class RolloutRequest(_Request):
    trials: int | None = Field(None, ge=1, description="Games per position: at most the "
                               "server's limit (default 1296, or the limit if lower).")
    seed: int = Field(0, ge=0, lt=2 ** 64)
    truncate: int = Field(0, ge=0, description="Plies before evaluating (0: to the end).")
    dice: Dice = Field(None, description="Roll out every play of this roll (default: the ID's roll).")
    max_plays: int | None = Field(None, ge=1, description="With dice: the best N plays only.")


# ---------------------------------------------------------------- the work (in the workers)

def _init_worker() -> None:
    """Load the CLI's modules and the net (weights and bear-off tables) once.
    Ctrl-C is the server's to handle: a worker ignores SIGINT and is stopped
    by the server."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from .cli import cube as _cli_cube, evaluate as _cli_evaluate  # noqa: F401
    from .evaluate import get_evaluator
    from .position import Position

    get_evaluator("net").evaluate(Position.from_position_id("4HPwATDgc/ABMA"))


def _dice(value):
    """A request's ``dice`` -> a checked roll or None."""
    from .errors import InvalidDiceError
    from .formats import check_dice, parse_dice

    if value is None or value == "":
        return None
    if isinstance(value, str):
        return parse_dice(value)
    if len(value) != 2:
        raise InvalidDiceError(f"a roll is two dice, not {value!r}")
    return check_dice(*value)


def _context(base, req: dict):
    from .cli._options import resolve_context

    return resolve_context(base, **req["context"])


def _hint(req: dict) -> dict:
    from .analyze import parse_record
    from .hint import hint

    record = parse_record(req["position"])
    context = _context(record.context, req)
    return hint(req["position"], _dice(req["dice"]), context=context, ply=req["ply"],
                evaluator=req["evaluator"], top=req["top"], cubeless=req["cubeless"]).to_dict()


def _evaluate(req: dict) -> dict:
    from .cli.evaluate import evaluation_doc, ranking_doc
    from .evaluate import get_evaluator, rank_plays

    arg = PositionArg.parse(req["position"])
    context = _context(arg.cube_context(), req)
    ev = get_evaluator(req["evaluator"])
    dice = _dice(req["dice"]) or arg.dice
    if dice is None:
        return evaluation_doc(arg.position, ev, req["plies"])
    cube = None if req["cubeless"] else context
    ranked = rank_plays(arg.position, dice[0], dice[1], plies=req["plies"], evaluator=ev, cube=cube)
    return ranking_doc(arg.position, dice, ev, req["plies"], ranked, cube)


def _cube(req: dict) -> dict:
    from .cli.cube import decide, decision_doc
    from .evaluate import get_evaluator

    arg = PositionArg.parse(req["position"])
    context = _context(arg.cube_context(), req)
    get_evaluator(req["evaluator"])          # an unknown name is a bad request
    if req["ply"] and req["efficiency"] is not None:
        raise BgfastError("efficiency is for the 0-ply decision; the search uses each "
                          "position's own")
    dec, source = decide(arg.position, context, efficiency=req["efficiency"],
                         evaluator=req["evaluator"], ply=req["ply"])
    return decision_doc(dec, context, req["ply"], source, arg.position)


def _rollout(req: dict) -> dict:
    from .rollout import RolloutSettings, rollout, rollout_plays

    arg = PositionArg.parse(req["position"])
    s = RolloutSettings(trials=req["trials"], seed=req["seed"], truncate=req["truncate"],
                        backend="serial")
    dice = _dice(req["dice"]) or arg.dice
    pos = arg.position
    if dice is None:
        return rollout(pos, s).to_dict()
    plays = rollout_plays(pos, dice[0], dice[1], s, max_plays=req["max_plays"])
    return {"position_id": pos.position_id(), "dice": list(dice),
            "plays": [r.to_dict() for r in plays]}


_WORK = {"hint": _hint, "evaluate": _evaluate, "cube": _cube, "rollout": _rollout}


def _run(kind: str, req: dict) -> tuple[int, dict]:
    """Do one request's work in a worker -> ``(status, document)``; bad input is
    status 400 with the error's one line."""
    try:
        return 200, _WORK[kind](req)
    except (BgfastError, click.UsageError) as exc:
        message = exc.format_message() if isinstance(exc, click.UsageError) else str(exc)
        return 400, {"error": message.splitlines()[0] if message else type(exc).__name__}


# ---------------------------------------------------------------- the app

def _one_line(exc: RequestValidationError, content_type: str) -> str:
    """The first problem of a request that does not parse, in one line."""
    errors = exc.errors()
    if not errors:
        return "bad request"
    err = errors[0]
    if tuple(err.get("loc", ())) == ("body",) and "json" not in content_type:
        return f"the body must be a JSON object sent as application/json, not {content_type!r}"
    if err.get("type") == "json_invalid":
        return f"bad JSON: {err.get('ctx', {}).get('error', err.get('msg', ''))}"
    where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
    return f"{where}: {err.get('msg', 'invalid')}"


def create_app(workers: int = DEFAULT_WORKERS, max_trials: int = DEFAULT_MAX_TRIALS,
               ready=None) -> FastAPI:
    """The ASGI application: ``workers`` worker processes, rollouts of at most
    ``max_trials`` trials.  ``ready()`` is called once the workers have loaded
    the evaluator."""
    if workers < 1:
        raise BgfastError(f"workers must be at least 1, not {workers}")
    if max_trials < 1:
        raise BgfastError(f"max_trials must be at least 1, not {max_trials}")

    page_html = PAGE.read_text(encoding="utf-8")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        ctx = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker)
        app.state.pool = pool
        try:
            loop = asyncio.get_running_loop()
            # one task per worker makes the pool start (and warm) every worker now
            await asyncio.gather(*(loop.run_in_executor(pool, _warm) for _ in range(workers)))
            if ready is not None:
                ready()
            yield
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in ctx.active_children():
                proc.terminate()
            for proc in ctx.active_children():
                proc.join()

    app = FastAPI(title="bgfast", summary="A backgammon engine over HTTP",
                  version=_version(), lifespan=lifespan)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError):
        return JSONResponse({"error": _one_line(exc, request.headers.get("content-type", ""))},
                            status_code=400)

    async def work(kind: str, body: BaseModel) -> JSONResponse:
        req = body.model_dump()
        if isinstance(body, _Context):
            req["context"] = body.context_fields()
        try:
            status, doc = await asyncio.get_running_loop().run_in_executor(
                app.state.pool, _run, kind, req)
        except BrokenProcessPool:
            return JSONResponse({"error": "the worker pool stopped"}, status_code=503)
        except Exception as exc:          # a fault of the server, not of the request
            return JSONResponse({"error": f"internal error: {type(exc).__name__}: {exc}"},
                                status_code=500)
        return JSONResponse(doc, status_code=status)

    @app.post("/hint", summary="The ranked plays for a roll, or the cube decision")
    async def hint(body: HintRequest):
        return await work("hint", body)

    @app.post("/evaluate", summary="Probabilities, or the plays of a roll ranked")
    async def evaluate(body: EvaluateRequest):
        return await work("evaluate", body)

    @app.post("/cube", summary="The cube decision")
    async def cube(body: CubeRequest):
        return await work("cube", body)

    @app.post("/rollout", summary=f"A cubeless rollout (at most {max_trials} trials)")
    async def rollout(body: RolloutRequest):
        if body.trials is None:
            body.trials = min(DEFAULT_TRIALS, max_trials)
        if body.trials > max_trials:
            return JSONResponse({"error": f"trials {body.trials} above this server's limit "
                                          f"of {max_trials}"}, status_code=400)
        return await work("rollout", body)

    @app.get("/board.svg", summary="The position as an SVG picture",
             response_class=Response, responses={200: {"content": {"image/svg+xml": {}}}})
    async def board(position: str = Query(..., description="Position ID, XGID, "
                                                           "PositionID:MatchID or FIBS board")):
        from .svg import board_svg

        try:
            pos = PositionArg.parse(position).position
        except BgfastError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return Response(board_svg(pos, title=pos.position_id()), media_type="image/svg+xml")

    @app.get("/health", summary="The server answers")
    async def health():
        return {"status": "ok", "workers": workers, "max_trials": max_trials}

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page():
        return HTMLResponse(page_html)

    return app


def _warm() -> int:
    """A task that makes the pool start a worker (the initializer loads the net)."""
    import os
    import time

    time.sleep(0.2)          # hold this worker so the next task starts another
    return os.getpid()


def _version() -> str:
    from . import __version__

    return __version__


def serve(sock, *, workers: int = DEFAULT_WORKERS, max_trials: int = DEFAULT_MAX_TRIALS,
          log_level: str = "warning") -> None:
    """Serve :func:`create_app` on the bound socket ``sock`` until SIGINT or
    SIGTERM; prints the address on stderr once the workers are ready."""
    import uvicorn

    host, port = sock.getsockname()[:2]

    def ready():
        print(f"bgfast serve: http://{host}:{port}/ ({workers} workers, rollouts up to "
              f"{max_trials} trials)", file=sys.stderr, flush=True)

    app = create_app(workers, max_trials, ready=ready)
    config = uvicorn.Config(app, log_level=log_level, timeout_graceful_shutdown=5,
                            access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
