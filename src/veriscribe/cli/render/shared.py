"""What several renderers use: JSON, error and warning lines, progress, formats."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import Progress, Task, TextColumn
from rich.text import Text

from veriscribe.cli.terminal import json_safe, sanitize
from veriscribe.results import plain


def print_json(data: Any) -> None:
    """Print machine-readable JSON on stdout and nothing else."""
    text = json.dumps(plain(data), ensure_ascii=False, indent=2, default=str)
    sys.stdout.write(json_safe(text) + "\n")


class _PlainColumn(TextColumn):
    """A progress column of text, never markup, laid out as it is shown.

    Rich's own column measures its text before the console escapes control
    characters, so a long escape would be cut short; this one escapes them first.
    """

    def __init__(self, text_format: str, *, style: str = "") -> None:
        """Show ``text_format`` filled in from the task (the format is the code's own)."""
        super().__init__(text_format, style=style, markup=False)

    def render(self, task: Task) -> Text:
        """Return the filled-in text, its control characters shown as escapes."""
        text = self.text_format.format(task=task)
        return Text(sanitize(text), style=self.style, justify=self.justify)


@contextmanager
def _ends_clean(progress: Progress) -> Iterator[None]:
    """Show a progress display that stays when done, but not when the command fails.

    A failed command ends in its error line alone, not under a stale progress bar.
    """
    with progress:
        try:
            yield
        except BaseException:
            progress.live.transient = True
            raise


def error_line(console: Console, message: str) -> None:
    """Print one clear error line on stderr (the message is text, never markup)."""
    console.print(
        Text.assemble(("error:", "bold red"), " ", message),
        highlight=False,
        soft_wrap=True,
    )


def warning_line(console: Console, message: str) -> None:
    """Print one warning line on stderr (the message is text, never markup)."""
    console.print(
        Text.assemble(("warning:", "bold yellow"), " ", message),
        highlight=False,
        soft_wrap=True,
    )


def duration(seconds: float | None) -> str:
    """Format seconds as ``1h02m``, ``3m05s`` or ``12.3s`` (``-`` when unknown)."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def compact(number: int) -> str:
    """Format a count briefly: 950, 12.3k, 4.5M."""
    if number < 1000:
        return str(number)
    if number < 1_000_000:
        return f"{number / 1000:.1f}k"
    return f"{number / 1_000_000:.1f}M"


def _number(value: Any, digits: int = 3, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
