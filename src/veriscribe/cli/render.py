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


class AbstractProgress:
    """A live view of the abstract graph's stages while it runs."""

    def __init__(self, title: str) -> None:
        from rich.live import Live

        self.title = title
        self.stage = "dividing the article into facets"
        self.facets: dict[str, str] = {}
        self.fallbacks: list[str] = []
        self.live = Live(
            self._render(), console=err_console, refresh_per_second=4, transient=True
        )

    def __enter__(self) -> AbstractProgress:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(None, None, None)

    def _render(self) -> Table:
        table = Table(title=self.title, show_header=True, header_style="bold")
        table.add_column("facet")
        table.add_column("state")
        for name, state in self.facets.items():
            table.add_row(name, state)
        table.caption = self.stage + (
            f"  fallbacks: {', '.join(self.fallbacks)}" if self.fallbacks else ""
        )
        return table

    def event(self, node: str, update: dict[str, Any]) -> None:
        """Update the view from one graph update."""
        if node in ("divide", "regroup"):
            for name, paragraphs in update.get("groups", {}).items():
                self.facets[name] = f"summarising {len(paragraphs)} paragraphs"
            self.stage = "summarising facets in parallel"
        for result in update.get("results", []):
            if result["status"] != "empty":
                self.facets[result["name"]] = result["status"]
        self.fallbacks.extend(update.get("fallbacks", []))
        if node == "join":
            self.stage = "refining the draft"
        if node == "refine":
            self.stage = "done"
        self.live.update(self._render())


def abstract_result(result: dict[str, Any]) -> None:
    """Render an abstract and the table of its facets."""
    from rich.panel import Panel

    title = result.get("title") or result["id"]
    console.print(Panel(result["abstract"], title=f"Abstract: {title}", expand=True))
    table = Table(show_header=True, header_style="bold")
    for column in (
        "facet",
        "paragraphs",
        "status",
        "prompt tok",
        "output tok",
        "summary",
    ):
        table.add_column(column, justify="right" if "tok" in column else "left")
    for facet in result["facets"]:
        table.add_row(
            facet["name"],
            str(len(facet["paragraphs"])),
            facet["status"]
            + (f" ({facet['chunks']} chunks)" if facet["chunks"] > 1 else ""),
            str(facet["prompt_tokens"]),
            str(facet["output_tokens"]),
            f"{len(facet['summary'])} chars",
        )
    console.print(table)
    usage = result["usage"]
    console.print(
        f"model {result['model']} · split {result['split']} · prompt {result['prompt']}"
        f" · {usage['calls']} calls · {usage['prompt_tokens']} prompt + "
        f"{usage['output_tokens']} output tokens · {result['seconds']:.1f} s"
    )
    if not result["refined"]:
        console.print(
            "[yellow]refinement failed: the abstract is the unrefined draft[/]"
        )
    if result["fallbacks"]:
        console.print(f"[yellow]fallbacks:[/] {'; '.join(result['fallbacks'])}")


# ------------------------------------------------------------------------- batches


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


def batch_status(progress: Any) -> str:
    """Return the one-line state of a running batch (a ``BatchProgress``)."""
    p = progress
    parts = [
        f"done {p.done}",
        f"failed {p.failed}",
        f"remaining {p.remaining}",
        f"articles in flight {p.articles_in_flight}",
        f"calls in flight {p.calls_in_flight}/{p.call_limit}",
        f"{p.tokens_per_second:,.0f} tok/s",
        f"ETA {duration(p.eta_seconds)}",
    ]
    return " · ".join(parts)


class BatchView:
    """A live progress display of a batch: a bar and the counts beneath it."""

    def __init__(self) -> None:
        from rich.live import Live

        self.progress: Any = None
        # Transient: the summary printed afterwards replaces the bar.
        self.live = Live(
            self._render(), console=err_console, refresh_per_second=4, transient=True
        )

    def __enter__(self) -> BatchView:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(None, None, None)

    def _render(self) -> Any:
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.text import Text

        p = self.progress
        if p is None:
            return Text("")
        if p.stage == "registering":
            return Text(f"run {p.run_id}: reading inputs ...")
        finished = p.done + p.failed
        bar = Table.grid(padding=(0, 1))
        bar.add_row(
            ProgressBar(total=max(p.total, 1), completed=finished, width=40),
            f"{finished}/{p.total} articles",
            f"{duration(p.elapsed)}",
        )
        title = f"run {p.run_id}"
        if p.stage == "stopping":
            title += (
                f" [yellow]stopping: finishing {p.articles_in_flight} articles in "
                "flight (Ctrl-C again to stop now)[/]"
            )
        return Group(Text.from_markup(title), bar, Text(batch_status(p)))

    def update(self, progress: Any) -> None:
        """Show a new ``BatchProgress`` snapshot."""
        self.progress = progress
        self.live.update(self._render())


def _resume_hint(summary: dict[str, Any]) -> str | None:
    if summary["remaining"] or summary.get("interrupted"):
        return f"resume with: veriscribe runs resume {summary['run_id']}"
    return None


def batch_line(summary: dict[str, Any]) -> None:
    """Print a batch's outcome in one line (quiet mode)."""
    console.print(
        f"run {summary['run_id']}: {summary['done']} done, {summary['failed']} failed, "
        f"{summary['remaining']} remaining -> {summary['out']}",
        highlight=False,
        soft_wrap=True,
    )
    hint = _resume_hint(summary)
    if hint:
        err_console.print(hint, highlight=False, soft_wrap=True)


def _failures(summary: dict[str, Any], limit: int | None = None) -> None:
    failures = summary["failures"]
    if not failures:
        return
    table = Table(
        title=f"{len(failures)} failed", show_header=True, header_style="bold"
    )
    table.add_column("source", overflow="fold")
    table.add_column("attempts", justify="right")
    table.add_column("reason", overflow="fold")
    for failure in failures[:limit]:
        table.add_row(failure["source"], str(failure["attempts"]), failure["reason"])
    console.print(table)
    if limit is not None and len(failures) > limit:
        console.print(
            f"... and {len(failures) - limit} more: veriscribe runs show "
            f"{summary['run_id']}",
            highlight=False,
        )


def _totals(summary: dict[str, Any]) -> Table:
    table = Table(show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    rows = [
        ("run", summary["run_id"]),
        ("status", summary["status"]),
        ("model", str(summary["model"])),
        ("output", str(summary["out"])),
        (
            "articles",
            f"{summary['total']} total · {summary['done']} done · "
            f"{summary['failed']} failed · {summary['remaining']} remaining",
        ),
        (
            "model calls",
            f"{summary['calls']} ({summary['cached_calls']} from cache) · "
            f"{summary['prompt_tokens']:,} prompt + {summary['output_tokens']:,} "
            "output tokens",
        ),
        ("time", duration(summary["seconds"])),
    ]
    session = summary.get("session")
    if session:
        rows.append(
            (
                "this session",
                f"{session['processed']} articles · {session['calls']} model calls · "
                f"{duration(session['seconds'])}",
            )
        )
    for key, value in rows:
        table.add_row(key, value)
    return table


def batch_summary(summary: dict[str, Any]) -> None:
    """Render a finished (or interrupted) batch and its first failures."""
    console.print(_totals(summary))
    _failures(summary, limit=20)
    hint = _resume_hint(summary)
    if hint:
        console.print(f"[yellow]{hint}[/]", highlight=False)


def run_details(summary: dict[str, Any]) -> None:
    """Render one run with every failure."""
    console.print(_totals(summary))
    options = summary.get("options") or {}
    console.print(
        "options: " + " · ".join(f"{k} {v}" for k, v in sorted(options.items())),
        highlight=False,
    )
    if summary.get("call_log"):
        calls = ", ".join(f"{k} {v}" for k, v in sorted(summary["call_log"].items()))
        console.print(f"call log: {calls}", highlight=False)
    sessions = summary.get("sessions") or []
    if sessions:
        console.print(f"sessions: {len(sessions)}", highlight=False)
    _failures(summary)


def compact(number: int) -> str:
    """Format a count briefly: 950, 12.3k, 4.5M."""
    if number < 1000:
        return str(number)
    if number < 1_000_000:
        return f"{number / 1000:.1f}k"
    return f"{number / 1_000_000:.1f}M"


def runs_table(runs: list[dict[str, Any]]) -> None:
    """Render the list of runs."""
    if not runs:
        console.print("no runs yet")
        return
    from rich import box

    table = Table(show_header=True, header_style="bold", box=box.SIMPLE_HEAD)
    table.add_column("run", no_wrap=True)
    table.add_column("status", no_wrap=True)
    for column in ("done", "failed", "left", "calls", "tokens", "time"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("model", overflow="fold")
    for r in runs:
        table.add_row(
            r["run_id"],
            r["status"],
            str(r["done"]),
            str(r["failed"]),
            str(r["remaining"]),
            compact(r["calls"]),
            compact(r["prompt_tokens"] + r["output_tokens"]),
            duration(r["seconds"]),
            str(r["model"]),
        )
    console.print(table)
