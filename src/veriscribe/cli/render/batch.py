"""Batches and their runs: the live view, the summary or one line, the stored runs."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from veriscribe.cli.render.shared import _number, compact, duration
from veriscribe.results import BatchSummary, EndpointReport, RunListing, RunSummary


def batch_status(progress: Any) -> str:
    """Return the one-line state of a running batch (a ``BatchProgress``)."""
    p = progress
    parts = [
        f"done {p.done}",
        f"failed {p.failed}",
        f"remaining {p.remaining}",
        f"in flight: {p.articles_in_flight} articles, "
        f"{p.calls_in_flight}/{p.call_limit} calls",
        f"{p.tokens_per_second:,.0f} tok/s",
        f"ETA {duration(p.eta_seconds)}",
    ]
    return " · ".join(parts)


class BatchView:
    """A live progress display of a batch: a bar and the counts beneath it."""

    def __init__(self, console: Console) -> None:
        from rich.live import Live

        self.progress: Any = None
        # Transient: the summary printed afterwards replaces the bar.
        self.live = Live(
            self._render(), console=console, refresh_per_second=4, transient=True
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
        title = Text(f"run {p.run_id}")
        if p.stage == "stopping":
            title.append(
                f" stopping: finishing {p.articles_in_flight} articles in "
                "flight (Ctrl-C again to stop now)",
                style="yellow",
            )
        return Group(title, bar, Text(batch_status(p)))

    def __call__(self, progress: Any) -> None:
        """Show a new ``BatchProgress`` snapshot (the view is the progress callback)."""
        self.update(progress)

    def update(self, progress: Any) -> None:
        """Show a new ``BatchProgress`` snapshot."""
        self.progress = progress
        self.live.update(self._render())


def _resume_hint(summary: BatchSummary) -> str | None:
    if summary.remaining or summary.interrupted:
        return f"resume with: veriscribe runs resume {summary.run_id}"
    return None


def batch_line(console: Console, summary: BatchSummary, *, errors: Console) -> None:
    """Print a batch's outcome in one line (quiet mode); a resume hint on ``errors``."""
    console.print(
        f"run {summary.run_id}: {summary.done} done, {summary.failed} failed, "
        f"{summary.remaining} remaining -> {summary.out}",
        highlight=False,
        soft_wrap=True,
    )
    hint = _resume_hint(summary)
    if hint:
        errors.print(hint, highlight=False, soft_wrap=True)


def _failures(console: Console, summary: RunSummary, limit: int | None = None) -> None:
    failures = summary.failures
    if not failures:
        return
    table = Table(
        title=f"{len(failures)} failed", show_header=True, header_style="bold"
    )
    table.add_column("source", overflow="fold")
    table.add_column("attempts", justify="right")
    table.add_column("reason", overflow="fold")
    for failure in failures[:limit]:
        table.add_row(failure.source, str(failure.attempts), failure.reason)
    console.print(table)
    if limit is not None and len(failures) > limit:
        console.print(
            f"... and {len(failures) - limit} more: veriscribe runs show "
            f"{summary.run_id}",
            highlight=False,
        )


def _totals(summary: RunSummary) -> Table:
    table = Table(show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    rows = [
        ("run", summary.run_id),
        ("status", summary.status),
        ("model", str(summary.model)),
        ("output", str(summary.out)),
        (
            "articles",
            f"{summary.total} total · {summary.done} done · "
            f"{summary.failed} failed · {summary.remaining} remaining",
        ),
        (
            "model calls",
            f"{summary.calls} ({summary.cached_calls} from cache) · "
            f"{summary.prompt_tokens:,} prompt + {summary.output_tokens:,} "
            "output tokens",
        ),
        ("time", duration(summary.seconds)),
    ]
    if isinstance(summary, BatchSummary):
        session = summary.session
        rows.append(
            (
                "this session",
                f"{session.processed} articles · {session.calls} model calls · "
                f"{duration(session.seconds)}",
            )
        )
    for key, value in rows:
        table.add_row(key, value)
    return table


def batch_summary(console: Console, summary: BatchSummary) -> None:
    """Render a finished (or interrupted) batch and its first failures."""
    console.print(_totals(summary))
    _failures(console, summary, limit=20)
    hint = _resume_hint(summary)
    if hint:
        console.print(Text(hint, style="yellow"))


def run_details(console: Console, summary: RunSummary) -> None:
    """Render one run with every failure."""
    console.print(_totals(summary))
    options = summary.options or {}
    console.print(
        "options: " + " · ".join(f"{k} {v}" for k, v in sorted(options.items())),
        highlight=False,
    )
    if summary.call_log:
        calls = ", ".join(f"{k} {v}" for k, v in sorted(summary.call_log.items()))
        console.print(f"call log: {calls}", highlight=False)
    if summary.sessions:
        console.print(f"sessions: {len(summary.sessions)}", highlight=False)
    if summary.endpoints:
        console.print(endpoints_table(summary.endpoints))
    _failures(console, summary)


def endpoints_table(endpoints: list[EndpointReport]) -> Table:
    """Return what each model server did: calls, errors, tokens and latency."""
    from rich import box

    table = Table(show_header=True, header_style="bold", box=box.SIMPLE_HEAD)
    table.add_column("endpoint", overflow="fold")
    for column in ("calls", "errors", "tokens", "p50 s", "p95 s"):
        table.add_column(column, justify="right", no_wrap=True)
    for e in endpoints:
        table.add_row(
            e.endpoint,
            str(e.calls),
            str(e.errors),
            compact(e.prompt_tokens + e.output_tokens),
            _number(e.latency_p50_s, 2),
            _number(e.latency_p95_s, 2),
        )
    return table


def runs_table(console: Console, runs: list[RunListing]) -> None:
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
            r.run_id,
            r.status,
            str(r.done),
            str(r.failed),
            str(r.remaining),
            compact(r.calls),
            compact(r.prompt_tokens + r.output_tokens),
            duration(r.seconds),
            str(r.model),
        )
    console.print(table)
