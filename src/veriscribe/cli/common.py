"""What every command shares: option types, settings from flags, and running a service."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from veriscribe.cli import render
from veriscribe.errors import VeriscribeError
from veriscribe.settings import Settings

T = TypeVar("T")

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
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON only.")
]
PlotOpt = Annotated[
    Path | None,
    typer.Option("--plot", help="Also draw the figures of the report into this PNG."),
]


def settings_for(model: str | None = None, base_url: str | None = None) -> Settings:
    """Return settings from the environment with CLI overrides applied."""
    try:
        return Settings().with_overrides(model=model, base_url=base_url)
    except ValueError as exc:
        render.error_line(f"bad setting: {exc}")
        raise typer.Exit(1) from exc


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a service coroutine; a VeriscribeError becomes one error line and exit 1."""
    try:
        return asyncio.run(coro)
    except VeriscribeError as exc:
        render.error_line(exc.user_message)
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:
        render.error_line("interrupted")
        raise typer.Exit(130) from None


def guarded(action: Callable[[], T]) -> T:
    """Run a synchronous step; a VeriscribeError becomes one error line and exit 1."""
    try:
        return action()
    except VeriscribeError as exc:
        render.error_line(exc.user_message)
        raise typer.Exit(1) from exc


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
