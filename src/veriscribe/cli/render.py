"""All terminal rendering: the only module that imports rich."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

console = Console()
err_console = Console(stderr=True)


def print_json(data: Any) -> None:
    """Print machine-readable JSON on stdout and nothing else."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def error_line(message: str) -> None:
    """Print one clear error line on stderr."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)


def doctor_report(report: dict[str, Any]) -> None:
    """Render the doctor's findings as a table."""
    table = Table(show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    for key in (
        "backend",
        "model",
        "endpoint",
        "context_tokens",
        "load_seconds",
        "prompt_tokens_per_second",
        "output_tokens_per_second",
        "reply",
    ):
        table.add_row(key.replace("_", " "), str(report[key]))
    status = "[green]ok[/]" if report["ok"] else "[red]failed[/]"
    console.print(table)
    console.print(f"round trip: {status}")


def not_available(command: str) -> None:
    """Say that a command exists but is not available in this version."""
    err_console.print(f"veriscribe {command}: not available yet in this version")
