"""How a command shows its result: JSON, one quiet line, or a live view and a report."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from typing import Any, Protocol, TypeVar

import typer
from rich.console import Console

from veriscribe.cli import terminal
from veriscribe.cli.common import guarded, run
from veriscribe.cli.render import batch as render
from veriscribe.cli.render.shared import print_json
from veriscribe.results import BatchSummary

T = TypeVar("T")


class Plotted(Protocol):
    """A report that records the plot drawn of it."""

    plot: str | None


P = TypeVar("P", bound=Plotted)


def present(
    call: Callable[[Any], Coroutine[Any, Any, T]],
    report: Callable[[Console, T], None],
    *,
    json_out: bool,
    live: Callable[[Console], AbstractContextManager[Any]] | None = None,
    quiet: bool = False,
    quiet_report: Callable[[Console, T], None] | None = None,
    save: Callable[[T], None] | None = None,
) -> T:
    """Run a service call and show its result the way the flags ask.

    Args:
        call: Starts the service call, given its progress callback (``None`` when
            nothing watches).
        report: Prints the result for a reader on the console it is given.
        json_out: Print the result as JSON instead, with no live view.
        live: Opens the live view on the console it is given (stderr); what it
            yields is the progress callback.
        quiet: Show no live view and print the result with ``quiet_report``.
        quiet_report: Prints the result in one line.
        save: Writes the result where the command was asked to; it runs before the
            result is shown, so what was computed is kept even if showing it fails.

    Returns:
        The result, for what the command does after showing it.
    """
    if json_out or quiet or live is None:
        result = run(call(None))
    else:
        with live(terminal.stderr) as on_progress:
            result = run(call(on_progress))
    if save is not None:
        save(result)
    if json_out:
        print_json(result)
    elif quiet and quiet_report is not None:
        quiet_report(terminal.stdout, result)
    else:
        report(terminal.stdout, result)
    return result


def with_plot(report: P, plot: Path | None, draw: Callable[[P, Path], None]) -> P:
    """Draw the report into ``plot`` when one is asked for, and record where."""
    if plot is not None:
        guarded(lambda: draw(report, plot))
        report.plot = str(plot)
    return report


def present_batch(
    start: Callable[[Any], Coroutine[Any, Any, BatchSummary]],
    *,
    quiet: bool,
    json_out: bool,
) -> None:
    """Run a batch with the chosen display; exit 130 when it was interrupted."""
    summary = present(
        start,
        render.batch_summary,
        json_out=json_out,
        live=render.BatchView,
        quiet=quiet,
        quiet_report=partial(render.batch_line, errors=terminal.stderr),
    )
    if summary.interrupted:
        raise typer.Exit(130)
