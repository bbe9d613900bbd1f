"""The ``serve`` command: the HTTP API on uvicorn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from veriscribe import service
from veriscribe.cli.common import (
    BaseUrlOpt,
    DbOpt,
    EndpointOpt,
    EndpointsFileOpt,
    ModelOpt,
    guarded,
    run,
    settings_for,
)
from veriscribe.errors import ConfigError
from veriscribe.settings import Settings

DB_CHECK_S = 15.0
"""Longest the database may take to answer at start."""

# No name: added to the root, ``serve`` stays a top-level command.
app = typer.Typer()


@app.command()
def serve(
    *,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on; any but loopback needs VERISCRIBE_SERVE_TOKEN.",
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")
    ] = 8000,
    db: DbOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    work_slots: Annotated[
        int,
        typer.Option(
            "--work-slots", min=1, help="Answers, checks and ingests run at once."
        ),
    ] = 2,
    queue: Annotated[
        int,
        typer.Option(
            "--queue", min=0, help="More that wait for a slot; beyond them, 429."
        ),
    ] = 8,
    runs: Annotated[
        int,
        typer.Option("--runs", min=1, help="Abstract runs working at once."),
    ] = 2,
    timeout: Annotated[
        float,
        typer.Option("--timeout", min=1, help="Seconds a request's work may take."),
    ] = 600.0,
    drain: Annotated[
        float,
        typer.Option(
            "--drain",
            min=0,
            help="Seconds that answers and articles in flight get to finish at SIGTERM.",
        ),
    ] = 25.0,
    work_dir: Annotated[
        Path | None,
        typer.Option(
            "--work-dir",
            help="Uploads and run outputs (default: `serve` beside the database).",
        ),
    ] = None,
    allow_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-origin",
            envvar="VERISCRIBE_SERVE_ALLOW_ORIGINS",
            help="A web origin (e.g. http://localhost:3000) whose pages may call the "
            "API too (repeatable; the variable takes several, space-separated). On "
            "loopback the server otherwise takes changes only from its own page.",
        ),
    ] = None,
) -> None:
    """Serve answers, checks, corpora and abstract runs as an HTTP API."""
    # Only this command needs the web stack: other commands start without it.
    from veriscribe.serve import ServeConfig, check_bind, create_app, token_from_env
    from veriscribe.serve.guard import parse_origin
    from veriscribe.serve.server import draining_server

    settings = settings_for(model, base_url, endpoint, endpoints_file)
    if db is not None:
        settings = settings.with_overrides(db=db)
    token = token_from_env()
    guarded(lambda: check_bind(host, token))
    origins = tuple(guarded(lambda: [parse_origin(o) for o in allow_origin or []]))
    # A database that does not answer stops the command here, in one line.
    run(database_answers(settings))
    config = ServeConfig(
        settings=settings,
        token=token,
        work_slots=work_slots,
        queue=queue,
        runs=runs,
        timeout_s=timeout,
        drain_s=drain,
        work_dir=work_dir,
        host=host,
        allow_origins=origins,
    )
    draining_server(create_app(config), host, port).run()


async def database_answers(settings: Settings) -> None:
    """Open the database once and ask it one question.

    Raises:
        VeriscribeError: The database cannot be opened or does not answer.
    """
    try:
        async with asyncio.timeout(DB_CHECK_S), service.open_store(settings) as store:
            await store.fetchone("SELECT 1")
    except TimeoutError:
        raise ConfigError(
            f"the database did not answer within {DB_CHECK_S:g} s"
        ) from None
