"""Guideline corpora: ``corpus add``'s progress and report, the list, one corpus."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from veriscribe.cli.render.shared import _ends_clean, _PlainColumn, compact, duration
from veriscribe.results import CorpusDetails, CorpusListing, IngestReport

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
        path, reason = item["path"], item["reason"]
        # A reader's reason names the file already.
        said = reason if reason.startswith(path) else f"{path}: {reason}"
        errors.print(Text.assemble(("skipped", "yellow"), f" {said}"))


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
