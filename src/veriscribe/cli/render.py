"""What the commands draw: reports, tables and live progress views, on a given console.

Titles, names, ids, reasons and model replies are input: they are drawn as text, never
as Rich markup. The consoles (:mod:`veriscribe.cli.terminal`) read no string as markup,
so the code's own styling is written as :class:`~rich.text.Text` with styles; and where
Rich itself would parse a string (panel titles, spinners, progress columns) it is given
Text, or a column with markup off.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from veriscribe.cli.terminal import json_safe, sanitize
from veriscribe.results import (
    COMPLIANT_TIERS,
    UNJUDGED,
    VERDICTS,
    AbstractResult,
    BatchSummary,
    CheckedAnswer,
    Citation,
    Claim,
    ClaimStatus,
    CorpusDetails,
    CorpusListing,
    DoctorReport,
    EndpointReport,
    IngestReport,
    QuestionSetSummary,
    RunListing,
    RunSummary,
    SourceRead,
    plain,
)


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


class AbstractProgress:
    """A live view of the abstract graph's stages while it runs."""

    def __init__(self, console: Console, title: str) -> None:
        from rich.live import Live

        self.title = title
        self.stage = "dividing the article into facets"
        self.facets: dict[str, str] = {}
        self.fallbacks: list[str] = []
        self.live = Live(
            self._render(), console=console, refresh_per_second=4, transient=True
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

    def __call__(self, node: str, update: dict[str, Any]) -> None:
        """Update the view from one graph update (the view is the event callback)."""
        self.event(node, update)

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


def abstract_result(console: Console, result: AbstractResult) -> None:
    """Render an abstract and the table of its facets."""
    from rich.panel import Panel

    title = result.title or result.id
    # A panel reads a string title as markup: give it Text.
    console.print(Panel(result.abstract, title=Text(f"Abstract: {title}"), expand=True))
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
    for facet in result.facets:
        table.add_row(
            facet.name,
            str(len(facet.paragraphs)),
            facet.status + (f" ({facet.chunks} chunks)" if facet.chunks > 1 else ""),
            str(facet.prompt_tokens),
            str(facet.output_tokens),
            f"{len(facet.summary)} chars",
        )
    console.print(table)
    usage = result.usage
    console.print(
        f"model {result.model} · split {result.split} · prompt {result.prompt}"
        f" · {usage.calls} calls · {usage.prompt_tokens} prompt + "
        f"{usage.output_tokens} output tokens · {result.seconds:.1f} s"
    )
    if not result.refined:
        console.print(
            Text(
                "refinement failed: the abstract is the unrefined draft",
                style="yellow",
            )
        )
    if result.fallbacks:
        console.print(
            Text.assemble(("fallbacks:", "yellow"), f" {'; '.join(result.fallbacks)}")
        )


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


def compact(number: int) -> str:
    """Format a count briefly: 950, 12.3k, 4.5M."""
    if number < 1000:
        return str(number)
    if number < 1_000_000:
        return f"{number / 1000:.1f}k"
    return f"{number / 1_000_000:.1f}M"


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


# ------------------------------------------------------------------ abstract metrics


def _number(value: Any, digits: int = 3, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _p_value(value: Any) -> str:
    if value is None:
        return "-"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _metric_digits(metric: str) -> int:
    if metric == "words":
        return 1
    return 2 if metric in ("density", "compression") else 3


_BETTER = {"closer_to_human": "closer to human", "target": "the asked length"}


def abstract_eval_report(console: Console, report: dict[str, Any]) -> None:
    """Render `eval abstracts`: metric means vs the human abstract, and a comparison."""
    from rich import box

    title = (
        f"Abstract metrics: {report['results']} · {report['scored']} of "
        f"{report['items']} scored · {report['failed']} failed"
    )
    table = Table(title=title, header_style="bold", box=box.SIMPLE_HEAD)
    table.add_column("metric", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("generated", justify="right")
    table.add_column("human", justify="right")
    table.add_column("gen - human", justify="right")
    table.add_column("|gen - human|", justify="right")
    table.add_column("better")
    for name, entry in report["metrics"].items():
        digits = _metric_digits(name)
        if entry.get("mean") is None and entry.get("note"):
            table.add_row(
                name, "0", Text("absent", style="dim"), "", "", "", entry["better"]
            )
            continue
        generated = _number(entry["mean"], digits)
        if entry.get("max") is not None:
            generated += f" (max {entry['max']:.0f})"
        table.add_row(
            name,
            str(entry["n"]),
            generated,
            _number(entry.get("human"), digits),
            _number(entry.get("difference"), digits, signed=True),
            _number(entry.get("abs_difference"), digits),
            _BETTER.get(entry["better"], entry["better"]),
        )
    console.print(table)
    comparison = report.get("comparison")
    if comparison:
        _comparison_table(console, comparison, report.get("against") or {})
    excluded = report.get("excluded") or []
    if excluded:
        shown = Table(
            title=f"not scored: {len(excluded)}",
            header_style="bold",
            box=box.SIMPLE_HEAD,
        )
        shown.add_column("id", overflow="fold")
        shown.add_column("reason", overflow="fold")
        for item in excluded[:20]:
            shown.add_row(str(item["id"]), str(item["reason"]))
        console.print(shown)
        if len(excluded) > 20:
            console.print(f"... and {len(excluded) - 20} more (see --json)")
    for note in report.get("notes", []):
        console.print(Text.assemble(("note:", "dim"), f" {note}"), soft_wrap=True)
    support = report.get("support")
    if support:
        accuracy = support.get("judge_accuracy")
        measured = (
            f"measured accuracy {accuracy:.3f} on {support['judge_accuracy_pairs']} "
            "held-out abstract pairs"
            if accuracy is not None
            else "accuracy not measured (eval judge --abstract-pairs)"
        )
        console.print(
            f"claim_support: each abstract sentence judged by the {support['judge']} "
            f"judge ({measured}) against its {support['evidence_sentences']} best "
            "BM25-ranked article sentences",
            highlight=False,
            soft_wrap=True,
        )
        check = support.get("calibration") or {}
        if check.get("sentences"):
            console.print(
                f"judge check: {check['fully_supported']} of {check['sentences']} article "
                "sentences judged fully supported by their own article",
                highlight=False,
            )
    if report.get("plot"):
        console.print(f"plot: {report['plot']}", highlight=False)


def _comparison_table(
    console: Console, comparison: dict[str, Any], other: dict[str, Any]
) -> None:
    from rich import box

    table = Table(
        title=(
            f"A = {comparison['a']}  vs  B = {comparison['b']} · "
            f"{comparison['paired']} paired articles · "
            f"{comparison['resamples']:,} bootstrap resamples"
        ),
        header_style="bold",
        box=box.SIMPLE_HEAD,
        caption=(
            "Abstractiveness metrics compare |x - human| (lower is closer; A - B < 0: "
            "A is closer to the human abstract); the others compare raw scores. "
            "* p<0.05 ** p<0.01 *** p<0.001 (two-sided)"
        ),
    )
    table.add_column("metric", no_wrap=True)
    table.add_column("test")
    table.add_column("n", justify="right")
    table.add_column("A", justify="right")
    table.add_column("B", justify="right")
    table.add_column("A - B", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("p", justify="right")
    table.add_column("", no_wrap=True)
    for name, entry in comparison["metrics"].items():
        digits = _metric_digits(name)
        test = "|x - human|" if entry["test"] == "abs_deviation" else "raw"
        if entry.get("mean_difference") is None:
            table.add_row(name, test, str(entry.get("n", 0)), "", "", "-", "", "", "")
            continue
        table.add_row(
            name,
            test,
            str(entry["n"]),
            _number(entry["a"], digits),
            _number(entry["b"], digits),
            _number(entry["mean_difference"], digits, signed=True),
            f"[{_number(entry['ci_low'], digits)}, {_number(entry['ci_high'], digits)}]",
            _p_value(entry["p_value"]),
            entry["significance"],
        )
    console.print(table)
    if other.get("failed") or other.get("excluded"):
        console.print(
            f"B: {other.get('scored', 0)} of {other.get('items', 0)} scored · "
            f"{other.get('failed', 0)} failed",
            highlight=False,
        )


def baseline_summary(console: Console, summary: dict[str, Any]) -> None:
    """Render the outcome of a baseline run."""
    usage = summary["usage"]
    line = (
        f"{summary['baseline']} baseline ({summary['model']}): {summary['written']} "
        f"abstracts, {summary['failed']} failed -> {summary['out']}"
    )
    if summary["truncated"]:
        line += f" · {summary['truncated']} articles truncated to the context"
    if usage["calls"] or usage["cached_calls"]:
        line += (
            f" · {usage['calls']} calls ({usage['cached_calls']} cached), "
            f"{usage['prompt_tokens']:,} prompt + {usage['output_tokens']:,} output tokens"
        )
    console.print(line + f" · {duration(summary['seconds'])}", highlight=False)
    for failure in summary["failures"][:20]:
        console.print(
            Text.assemble(
                ("failed", "red"), f" {failure['source']}: {failure['reason']}"
            ),
            soft_wrap=True,
        )


class CountProgress:
    """A transient progress bar counting finished items."""

    def __init__(self, console: Console, description: str) -> None:
        self.progress = Progress(
            _PlainColumn(description),
            BarColumn(),
            MofNCompleteColumn(),
            console=console,
            transient=True,
        )
        self.task = self.progress.add_task(description, total=None)

    def __enter__(self) -> CountProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def __call__(self, done: int, total: int) -> None:
        """Show ``done`` of ``total`` items finished (the view is the callback)."""
        self.update(done, total)

    def update(self, done: int, total: int) -> None:
        """Show ``done`` of ``total`` items finished."""
        self.progress.update(self.task, completed=done, total=total)


# --- guideline corpora and cited answers ----------------------------------------------

_INGEST_STAGES = {
    "read": "reading documents",
    "store": "storing sections",
    "summarize": "summarising sections",
    "embed": "embedding sentences",
}


@contextmanager
def ingest_progress(console: Console) -> Iterator[Callable[[Any], None]]:
    """Show the stages of ``corpus add`` as progress bars on stderr."""
    progress = Progress(
        SpinnerColumn(),
        _PlainColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        _PlainColumn("{task.fields[detail]}", style="dim"),
        console=console,
    )
    tasks: dict[str, Any] = {}

    def update(event: Any) -> None:
        if event.stage not in tasks:
            tasks[event.stage] = progress.add_task(
                _INGEST_STAGES.get(event.stage, event.stage),
                total=max(event.total, 1),
                detail="",
            )
        progress.update(
            tasks[event.stage],
            completed=event.done if event.total else 1,
            total=max(event.total, 1),
            detail=event.detail,
        )

    with _ends_clean(progress):
        yield update


def ingest_report(console: Console, report: IngestReport, *, errors: Console) -> None:
    """Summarise what ``corpus add`` did."""
    parts = [
        f"{len(report.added)} added",
        f"{len(report.changed)} changed",
        f"{len(report.unchanged)} unchanged",
    ]
    console.print(
        Text.assemble(
            "corpus ",
            (report.corpus, "bold"),
            f": documents {', '.join(parts)}; {report.sections} sections",
        )
    )
    sources = report.summaries
    if sources:
        console.print(
            "summaries: "
            + ", ".join(
                f"{count} {source}" for source, count in sorted(sources.items())
            ),
            highlight=False,
        )
    usage = report.usage
    if usage.calls or usage.cached_calls:
        console.print(
            f"model {report.model}: {usage.calls} calls "
            f"({usage.cached_calls} cached), {usage.prompt_tokens} prompt + "
            f"{usage.output_tokens} output tokens, {duration(report.seconds)}",
            highlight=False,
        )
    for item in report.skipped:
        errors.print(
            Text.assemble(("skipped", "yellow"), f" {item['path']}: {item['reason']}")
        )


def corpora_table(console: Console, rows: list[CorpusListing]) -> None:
    """List corpora with their sizes."""
    if not rows:
        console.print(
            "no corpora yet: add one with `veriscribe corpus add NAME PATH...`"
        )
        return
    table = Table()
    for column in ("name", "documents", "sections", "characters", "summarised"):
        table.add_column(column, justify="left" if column == "name" else "right")
    for row in rows:
        table.add_row(
            row.name,
            str(row.documents),
            str(row.sections),
            compact(row.chars),
            f"{row.summarized}/{row.sections}",
        )
    console.print(table)


def corpus_details(console: Console, data: CorpusDetails, *, limit: int = 40) -> None:
    """Show a corpus's documents and the first sections with their summaries."""
    docs = Table(title=f"corpus {data.name}: documents", title_justify="left")
    for column in ("doc_id", "title", "sections", "source"):
        docs.add_column(column)
    for doc in data.documents:
        docs.add_row(doc.doc_id, doc.title, str(doc.sections), doc.source)
    console.print(docs)
    sections = Table(
        title=f"sections ({len(data.sections)})",
        title_justify="left",
        show_lines=False,
    )
    for column in ("key", "number", "title", "chars", "summary"):
        sections.add_column(column, overflow="fold")
    for row in data.sections[:limit]:
        sections.add_row(
            f"{row.doc_id}:{row.section_id}",
            row.number,
            row.title,
            str(row.chars),
            row.summary or Text("(none)", style="dim"),
        )
    console.print(sections)
    if len(data.sections) > limit:
        console.print(
            Text(
                f"... {len(data.sections) - limit} more (use --json for all)",
                style="dim",
            )
        )


_STATUS_STYLE: dict[ClaimStatus, tuple[str, str]] = {
    "certified": ("✔", "green"),
    "recovered": ("↺", "cyan"),
    "partial": ("◐", "yellow"),
    "unsupported": ("✘", "red"),
    "uncited": ("○", "magenta"),
    "unjudged": ("?", "blue"),
}

_NEXT_STAGE = {
    "retrieve": "writing the answer",
    "answer": "finding the claims",
    "filter_claims": "checking citations and quotes",
    "verify": "judging claim support",
    "judge": "judging claim support",
    "join": "recovering missing support",
    "recover": "recovering missing support",
    "present": "done",
}


@contextmanager
def qa_progress(
    console: Console,
    first: str = "choosing sections",
) -> Iterator[Callable[[str, Any], None]]:
    """Show which stage of checking an answer is running, on stderr."""
    judged = 0
    # A spinner reads a string as markup: give it Text.
    with console.status(Text(f"{first}...")) as status:

        def update(node: str, change: Any) -> None:
            nonlocal judged
            message = _NEXT_STAGE.get(node, node)
            if node == "retrieve":
                read = len(change.get("read_set", []))
                message = f"read {read} sections; {message}"
            elif node == "judge":
                judged += 1
                message = f"{message} ({judged} judged)"
            elif node == "filter_claims":
                claims = sum(s["claim"] for s in change.get("sentences", []))
                message = f"{claims} claims; {message}"
            status.update(Text(f"{message}..."))

        yield update


def _badge(status: ClaimStatus) -> Text:
    mark, style = _STATUS_STYLE[status]
    return Text(f"{mark} {status}", style=f"bold {style}")


def funnel_line(result: CheckedAnswer) -> str:
    """Return the one-line claim funnel of an answer."""
    f = result.funnel
    metrics = result.metrics

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.0f}%"

    return (
        f"funnel: {f['sentences']} sentences > {f['claims']} claims > "
        f"{f['covered']} covered > {f['verbatim']} verbatim > {f['lenient']} lenient > "
        f"{f['strict']} certified (+{f['recovered']} recovered)  "
        f"CCR {pct(metrics.get('ccr'))}  SCR {pct(metrics.get('scr'))}"
        + (f"  {f['not_checked']} not checked" if f.get("not_checked") else "")
        + ("  (no claim checked)" if not f["claims"] and not result.not_found else "")
    )


def _claim_detail(claim: Claim) -> Text:
    detail = Text(claim.text)
    numbers = sorted({c.n for c in claim.citations})
    if numbers:
        detail.append(" " + "".join(f"[{n}]" for n in numbers), style="dim")
    if claim.shortfall:
        detail.append(f"  ({claim.shortfall.replace('_', ' ')})", style="yellow")
    where = claim.recovered_from
    if claim.recovered_quote and where is not None:
        detail.append(
            f'\n  recovered: "{claim.recovered_quote}" '
            f"({where.doc_id}:{where.section_id}{_page_label(where.page, ', ')}, "
            f"{where.tier})",
            style="cyan",
        )
    elif claim.note and claim.status != "certified":
        detail.append(f"\n  {claim.note}", style="dim")
    if claim.judged_by == "lexical":
        detail.append("\n  restates its source word for word", style="dim")
    return detail


def _page_label(page: int | None, before: str = " ") -> str:
    """Return ``p. N`` for a source with pages (after ``before``), else ""."""
    return "" if page is None else f"{before}p. {page}"


def _citation_line(citation: Citation) -> Text:
    line = Text(f"[{citation.n}] ", style="bold")
    line.append(f"{citation.doc_id}:{citation.section_id}{_page_label(citation.page)} ")
    ok = citation.tier in COMPLIANT_TIERS
    line.append(f"({citation.tier})", style="green" if ok else "red")
    line.append(f' "{citation.quote}"')
    source = citation.source
    if source and " ".join(source.split()) != " ".join(citation.quote.split()):
        # The reader sees what the judge read: the whole sentence(s) quoted from.
        line.append(f'\n    in the source: "{source}"', style="dim")
    return line


def qa_result(
    console: Console,
    result: CheckedAnswer,
    *,
    show_usage: bool = True,
    errors: Console,
) -> None:
    """Render a checked answer: numbered citations, quotes, claim badges, funnel.

    A warning (the answer failed) goes to ``errors``.
    """
    if result.error:
        errors.print(Text(f"warning: {result.error}", style="yellow"))
    console.print(Text((result.answer_numbered or result.answer).strip()))
    console.print()
    if result.claims:
        table = Table(show_header=False, box=None, padding=(0, 1))
        table.add_column(no_wrap=True)
        table.add_column(overflow="fold")
        for claim in result.claims:
            table.add_row(_badge(claim.status), _claim_detail(claim))
        for sentence in result.not_checked:
            table.add_row(
                Text("not checked", style="bold yellow"),
                Text(sentence, style="dim"),
            )
        console.print(table)
        console.print()
    elif not result.not_found and not result.error:
        console.print(
            Text(
                "No claim of this answer was checked: nothing here is certified.",
                style="bold yellow",
            )
        )
        console.print()
    seen: set[int] = set()
    for citation in result.citations:
        if citation.n not in seen:
            seen.add(citation.n)
            console.print(_citation_line(citation))
    if result.citations:
        console.print()
    console.print(Text(funnel_line(result), style="dim"))
    if show_usage:
        usage = result.usage
        console.print(
            Text(
                f"{result.model or 'no model'}: {usage.calls} calls "
                f"({usage.cached_calls} cached), {usage.prompt_tokens} prompt + "
                f"{usage.output_tokens} output tokens, {duration(result.seconds)}; "
                f"read {len(result.read_set)} sections ({result.retrieval.method})",
                style="dim",
            )
        )


def chat_banner(console: Console, corpus: str, session_id: str, resumed: int) -> None:
    """Greet the chat user with the commands."""
    console.print(
        Text.assemble(
            ("veriscribe chat", "bold"),
            f" over corpus {corpus} (session {session_id}",
            f", {resumed} earlier turns)" if resumed else ")",
            "\n/sources shows the sections behind the last answer, /quit ends the chat.",
        )
    )


def chat_sources(console: Console, sources: list[SourceRead]) -> None:
    """Show the sections read for the last answer and the quotes taken from each."""
    if not sources:
        console.print("no answer yet")
        return
    for source in sources:
        head = Text(source.key, style="bold")
        head.append(_page_label(source.page))
        if source.title:
            head.append(f"  {source.number} {source.title}".rstrip())
        head.append(f"  ({source.chars} chars)", style="dim")
        console.print(head)
        if source.summary:
            console.print(Text(f"  {source.summary}", style="dim"))
        for citation in source.citations:
            console.print(
                Text(f'  [{citation.n}] ({citation.tier}) "{citation.quote}"')
            )


def chat_prompt() -> str:
    """Return the chat's input prompt."""
    return "you> "


def chat_goodbye(console: Console, session_id: str) -> None:
    """Say how to come back to this chat."""
    console.print(f"bye: resume with --session {session_id}", highlight=False)


def label_report(
    console: Console, report: dict[str, Any], labellers: tuple[str, ...]
) -> None:
    """Render per-label precision, recall and F1 for each labeller."""
    for name in labellers:
        scores = report[name]
        table = Table(
            title=f"{name} labeller: {report['sentences']} sentences "
            f"of {report['abstracts']} abstracts",
            header_style="bold",
        )
        for column in ("label", "precision", "recall", "f1", "support"):
            table.add_column(column, justify="left" if column == "label" else "right")
        for label, row in sorted(scores["labels"].items()):
            table.add_row(
                label,
                f"{row['precision']:.3f}",
                f"{row['recall']:.3f}",
                f"{row['f1']:.3f}",
                str(row["support"]),
            )
        console.print(table)
        console.print(
            f"micro_f1 {scores['micro_f1']:.3f} · macro_f1 {scores['macro_f1']:.3f}"
            f" · {scores['seconds']} s"
        )
    if report.get("plot"):
        console.print(f"plot: {report['plot']}", highlight=False)


def retrieval_report(console: Console, report: dict[str, Any]) -> None:
    """Render hit rate at k for each retriever."""
    ks = report["ks"]
    table = Table(
        title=f"retrieval on {report['corpus']}: {report['questions']} questions",
        header_style="bold",
    )
    table.add_column("retriever")
    for k in ks:
        table.add_column(f"hit@{k}", justify="right")
    table.add_column("mean sections", justify="right")
    table.add_column("seconds", justify="right")
    for name, row in report["retrievers"].items():
        table.add_row(
            name,
            *(f"{row[f'hit_rate_at_{k}']:.3f}" for k in ks),
            f"{row['mean_sections']:.1f}",
            str(row["seconds"]),
        )
    console.print(table)
    if report.get("plot"):
        console.print(f"plot: {report['plot']}", highlight=False)


def _share(count: int, total: int) -> str:
    return f"{100 * count / total:.1f}%" if total else "-"


def qa_eval_report(console: Console, report: dict[str, Any]) -> None:
    """Render `eval qa`: the claim funnel, coverage by window, tiers, verdicts."""
    from rich import box

    funnel, rates = report["funnel"], report["rates"]
    claims = funnel["claims"]
    table = Table(
        title=(
            f"Claim funnel: {report['results']} · {report['answers']} answers · "
            f"{report['not_found']} not found · {report['errors']} failed"
        ),
        header_style="bold",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("stage")
    table.add_column("claims", justify="right")
    table.add_column("of claims", justify="right")
    stages = [
        ("sentences", funnel["sentences"], ""),
        ("claims (filter kept)", claims, _share(claims, claims)),
        ("covered by a citation (CC)", funnel["covered"], None),
        ("with a verbatim quote", funnel["verbatim"], None),
        ("supported, lenient", funnel["lenient"], None),
        ("supported, strict = certified (CCR)", funnel["strict"], None),
        ("recovered", funnel["recovered"], None),
        ("certified + recovered (SCR)", funnel["strict"] + funnel["recovered"], None),
    ]
    for name, count, shown in stages:
        table.add_row(
            name, str(count), _share(count, claims) if shown is None else shown
        )
    console.print(table)

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    console.print(
        f"VCR {pct(rates['vcr'])} of {report['citations']} citations · "
        f"CSR strict {pct(rates['csr_strict'])} · CSR lenient {pct(rates['csr_lenient'])}"
        f" (over {funnel['verbatim']} claims with a verbatim quote)",
        highlight=False,
    )
    windows = Table(
        title="citation coverage by attribution window k",
        header_style="bold",
        box=box.SIMPLE_HEAD,
    )
    windows.add_column("k", justify="right")
    windows.add_column("any citation", justify="right")
    windows.add_column("verbatim citations only", justify="right")
    for k, row in report["coverage_by_window"].items():
        windows.add_row(k, pct(row["rate"]), pct(row["verbatim_rate"]))
    console.print(windows)
    tiers = Table(title="verbatim tiers", header_style="bold", box=box.SIMPLE_HEAD)
    tiers.add_column("tier")
    tiers.add_column("citations", justify="right")
    tiers.add_column("share", justify="right")
    for tier, row in report["tiers"].items():
        tiers.add_row(tier, str(row["count"]), pct(row["share"]))
    console.print(tiers)
    judged = Table(
        title="verdicts and shortfalls", header_style="bold", box=box.SIMPLE_HEAD
    )
    judged.add_column("verdict / shortfall")
    judged.add_column("claims", justify="right")
    for verdict, count in report["verdicts"].items():
        judged.add_row(verdict, str(count))
    for shortfall, count in report["shortfalls"].items():
        judged.add_row(f"shortfall: {shortfall}", str(count))
    console.print(judged)
    _gold_table(console, report)
    agreement = report.get("agreement")
    if agreement:
        kappa = agreement["kappa"]
        console.print(
            f"judge agreement with {agreement['second']}: {agreement['pairs']} claims "
            f"judged by both, Cohen's kappa "
            f"{'-' if kappa is None else f'{kappa:.3f}'}, observed agreement "
            f"{pct(agreement['observed_agreement'])}"
            + (f" ({agreement['note']})" if agreement.get("note") else ""),
            highlight=False,
            soft_wrap=True,
        )
    if report.get("plot"):
        console.print(f"plot: {report['plot']}", highlight=False)


def _gold_table(console: Console, report: dict[str, Any]) -> None:
    """Render `eval qa`'s answer figures: words, gold recall and hit, not found."""
    from rich import box

    def show(value: float | None, percent: bool = True) -> str:
        if value is None:
            return "-"
        return f"{100 * value:.1f}%" if percent else f"{value:g}"

    table = Table(
        title="answers against the gold answers",
        header_style="bold",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("over", justify="right")
    words = report.get("answer_words")
    if words:
        over = f"{words['answers']} answers given"
        table.add_row("answer words, median", show(words["median"], False), over)
        table.add_row("answer words, mean", show(words["mean"], False), over)
    table.add_row(
        "not found", show(report.get("not_found_rate")), str(report["answers"])
    )
    gold = report.get("gold")
    if gold:
        over = f"{gold['scored']} with a gold answer"
        table.add_row("gold recall (mean)", show(gold["gold_recall"]), over)
        table.add_row("gold hit", show(gold["gold_hit"]), over)
    scores = report.get("not_found_scores")
    if scores:
        said = scores["not_found_answerable"] + scores["not_found_unanswerable"]
        table.add_row("not-found precision", show(scores["precision"]), f"{said} said")
        table.add_row(
            "not-found recall",
            show(scores["recall"]),
            f"{scores['unanswerable']} unanswerable",
        )
        table.add_row(
            "answerable, wrongly not found",
            show(scores["answerable_rate"]),
            f"{scores['answerable']} answerable",
        )
    console.print(table)


@contextmanager
def question_progress(
    console: Console,
) -> Iterator[Callable[[dict[str, Any], int], None]]:
    """Show `eval make-questions` as a progress bar on stderr: kept and dropped so far."""
    progress = Progress(
        SpinnerColumn(),
        _PlainColumn("writing questions"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        _PlainColumn("{task.fields[detail]}", style="dim"),
        console=console,
    )
    counts = {"kept": 0, "dropped": 0}
    task = progress.add_task("questions", total=None, detail="")

    def update(item: dict[str, Any], total: int) -> None:
        counts["kept" if item["question"] is not None else "dropped"] += 1
        progress.update(
            task,
            advance=1,
            total=total,
            detail=f"{counts['kept']} kept · {counts['dropped']} dropped",
        )

    with _ends_clean(progress):
        yield update


def questions_report(console: Console, summary: dict[str, Any]) -> None:
    """Summarise a generated question set."""
    state = "resumed" if summary["resumed"] else "reused" if summary["reused"] else ""
    console.print(
        f"{summary['kept']} questions written to {summary['out']} "
        f"({summary['dropped']} dropped, {summary['regenerated']} regenerated once) "
        f"from {summary['documents']} documents of {summary['corpus']}"
        + (f" · {state}" if state else ""),
        highlight=False,
        soft_wrap=True,
    )
    table = Table(header_style="bold", box=None)
    table.add_column("")
    table.add_column("count", justify="right")
    for style, count in summary["by_style"].items():
        table.add_row(f"style {style}", str(count))
    for reason, count in summary["dropped_by_reason"].items():
        table.add_row(f"dropped: {reason}", str(count))
    for reason, count in summary["regenerated_by_reason"].items():
        table.add_row(f"first attempt failed: {reason}", str(count))
    table.add_row("eligible sections", str(summary["eligible_sections"]))
    for reason, count in summary["skipped_sections"].items():
        table.add_row(f"sections skipped: {reason.replace('_', ' ')}", str(count))
    console.print(table)
    usage = summary["usage"]
    console.print(
        f"{summary['model']} · {usage['calls']} calls · {usage['prompt_tokens']} prompt + "
        f"{usage['output_tokens']} output tokens · {summary['seconds']} s",
        highlight=False,
    )
    for note in summary["notes"]:
        console.print(Text.assemble(("note:", "dim"), f" {note}"), soft_wrap=True)


@contextmanager
def answer_set_progress(
    console: Console,
) -> Iterator[Callable[[CheckedAnswer, int, int], None]]:
    """Show `ask --questions` as a progress bar."""
    progress = Progress(
        SpinnerColumn(),
        _PlainColumn("answering"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        _PlainColumn("{task.fields[detail]}", style="dim"),
        console=console,
    )
    task = progress.add_task("answers", total=None, detail="")

    def update(result: CheckedAnswer, done: int, total: int) -> None:
        progress.update(task, completed=done, total=total, detail=funnel_line(result))

    with _ends_clean(progress):
        yield update


def answer_set_report(console: Console, summary: QuestionSetSummary) -> None:
    """Summarise `ask --questions`."""
    console.print(
        f"{summary.answered} of {summary.questions} questions answered into "
        f"{summary.out} ({summary.reused} reused from earlier runs; "
        f"{summary.gold_read} read their gold section) · {summary.usage.calls} calls · "
        f"{summary.seconds} s",
        highlight=False,
        soft_wrap=True,
    )
    for failure in summary.failed:
        console.print(f"not answered: {failure.id}: {failure.reason}", highlight=False)
    console.print(f"score them: veriscribe eval qa {summary.out}", highlight=False)


def abstract_judge_report(console: Console, report: dict[str, Any]) -> None:
    """Render `eval judge --abstract-pairs`: held-out accuracy and recall by kind."""
    from rich import box

    kinds = ", ".join(f"{k} {v}" for k, v in report["kinds"].items())
    console.print(
        f"{report['pairs']} abstract pairs from {report['articles']} articles "
        f"({kinds}) · held out: {report['splits'].get('test', 0)} pairs · "
        f"model {report['model'] or '-'}",
        highlight=False,
    )
    table = Table(header_style="bold", box=box.SIMPLE_HEAD)
    table.add_column("judge")
    table.add_column("accuracy (held out)", justify="right")
    table.add_column("tune", justify="right")
    kind_names = sorted(report["kinds"])
    for kind in kind_names:
        table.add_column(kind, justify="right")
    table.add_column("cut", justify="right")
    table.add_column("ROC AUC", justify="right")

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    for method, found in report["methods"].items():
        table.add_row(
            method,
            cell(found["accuracy"]),
            cell(found["accuracy_tune"]),
            *(cell(found["by_kind"]["test"].get(kind)) for kind in kind_names),
            cell(found["cut"]),
            cell(found["roc_auc"]),
        )
    console.print(table)
    console.print(
        "accuracy: supported (fully) or not, on pairs of held-out articles; a kind's "
        "column is the share of its held-out pairs judged right",
        highlight=False,
    )


def judge_eval_report(console: Console, report: dict[str, Any]) -> None:
    """Render `eval judge`: accuracy, safety, AUC and the confusion table per method."""
    from rich import box

    console.print(
        f"{report['pairs']} labelled pairs from corpus {report['corpus']} "
        f"({', '.join(f'{k} {v}' for k, v in report['labels'].items())}) · "
        f"model {report['model']}",
        highlight=False,
    )
    for method, found in report["methods"].items():
        auc = found["roc_auc"]
        table = Table(
            title=(
                f"judge {method}: accuracy {found['accuracy']:.3f} · "
                f"safe {found['safe_rate'] if found['safe_rate'] is not None else '-'} · "
                f"ROC AUC {'-' if auc is None else f'{auc:.3f}'}"
            ),
            header_style="bold",
            box=box.SIMPLE_HEAD,
        )
        table.add_column("label")
        verdicts = (*VERDICTS, UNJUDGED)
        for verdict in verdicts:
            table.add_column(verdict.replace("_", " "), justify="right")
        for label, counts in found["confusion"].items():
            table.add_row(label, *(str(counts.get(v, 0)) for v in verdicts))
        console.print(table)
        lanes = ", ".join(f"{k} {v}" for k, v in found["lanes"].items())
        console.print(f"lanes: {lanes}", highlight=False)
