"""The ``doctor`` command's report."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from veriscribe.results import DoctorReport


def doctor_report(console: Console, found: DoctorReport) -> None:
    """Render the doctor's findings as a table."""
    report = found.model_dump()
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
        "free_output_tokens_per_second",
        "constrained_output_tokens_per_second",
        "contexts",
        "threads_per_context",
        "reply",
    ):
        if report.get(key) is not None:
            table.add_row(key.replace("_", " "), str(report[key]))
    status = ("ok", "green") if report["ok"] else ("failed", "red")
    console.print(table)
    console.print(Text.assemble("round trip: ", status))
