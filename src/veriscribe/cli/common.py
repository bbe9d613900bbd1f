"""What every command shares: option types, settings from flags, and running a service."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import ValidationError

from veriscribe.cli import render
from veriscribe.cli.failure import fail
from veriscribe.errors import VeriscribeError
from veriscribe.settings import Settings

T = TypeVar("T")


@dataclass(frozen=True)
class GlobalOptions:
    """The options given before the command (``veriscribe --debug ...``)."""

    debug: bool = False
    max_bytes: int | None = None
    db: str | None = None


# Set by the root callback at the start of every invocation.
global_options: ContextVar[GlobalOptions | None] = ContextVar(
    "global_options", default=None
)

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", "-m", help="Model SPEC: local, ollama:<m>, openai:<m>, sim[:...]"
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="Server URL for openai: SPECs (vLLM, llama.cpp)."),
]
EndpointOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--endpoint",
        metavar="URL",
        help="A server of the ollama:/openai: model (repeat for several: calls are "
        "balanced over them and fail over between them).",
    ),
]
EndpointsFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--endpoints",
        metavar="FILE",
        help="TOML file of endpoint tables (url, kind, model, max_in_flight, "
        "api_key_env); default: VERISCRIBE_ENDPOINTS_FILE.",
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON only.")
]
PlotOpt = Annotated[
    Path | None,
    typer.Option("--plot", help="Also draw the figures of the report into this PNG."),
]


def settings_for(
    model: str | None = None,
    base_url: str | None = None,
    endpoints: list[str] | None = None,
    endpoints_file: Path | None = None,
) -> Settings:
    """Return settings from the environment with CLI overrides applied.

    The global options (``veriscribe --max-bytes N ...``) are overrides too.
    """
    try:
        settings = Settings()
    except ValidationError as exc:
        fail(f"bad setting: {setting_problems(exc)}")
    given = global_options.get() or GlobalOptions()
    return settings.with_overrides(
        model=model,
        base_url=base_url,
        endpoints=endpoints or None,
        endpoints_file=endpoints_file,
        max_input_bytes=given.max_bytes,
        db=given.db,
    )


def setting_problems(exc: ValidationError) -> str:
    """Return a settings validation error as one line naming the variables."""
    problems = []
    for error in exc.errors():
        path = [str(part) for part in error["loc"]]
        name = "VERISCRIBE_" + "__".join(path).upper()
        given = f" (got {error['input']!r})" if "input" in error else ""
        problems.append(f"{name}: {error['msg']}{given}")
    return "; ".join(problems)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a service coroutine; a VeriscribeError becomes one error line and exit 1."""
    try:
        return asyncio.run(coro)
    except VeriscribeError as exc:
        fail(exc.user_message)
    except KeyboardInterrupt:
        fail("interrupted", 130)


def guarded(action: Callable[[], T]) -> T:
    """Run a synchronous step; a VeriscribeError becomes one error line and exit 1."""
    try:
        return action()
    except VeriscribeError as exc:
        fail(exc.user_message)


def json_or_live(
    json_out: bool,
    call: Callable[[Any], dict[str, Any]],
    progress: Callable[[], AbstractContextManager[Any]],
    report: Callable[[dict[str, Any]], None],
) -> None:
    """Print ``call(None)`` as JSON, or run ``call`` under a live view and report it."""
    if json_out:
        render.print_json(call(None))
        return
    with progress() as update:
        result = call(update)
    report(result)
