"""One abstract: the live view of its graph's stages, and the abstract with its facets."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from veriscribe.events import (
    AbstractRefined,
    AbstractStageEvent,
    FacetsDivided,
    FacetsJoined,
    FacetsRegrouped,
    FacetSummarised,
    LeadTaken,
)
from veriscribe.results import AbstractResult


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

    def __call__(self, event: AbstractStageEvent) -> None:
        """Update the view from one step's event (the view is the event callback)."""
        self.event(event)

    def event(self, event: AbstractStageEvent) -> None:
        """Update the view from one step's event."""
        if isinstance(event, FacetsDivided | FacetsRegrouped):
            for name, count in event.paragraphs.items():
                self.facets[name] = f"summarising {count} paragraphs"
            self.stage = "summarising facets in parallel"
        facets = [event.facet] if isinstance(event, FacetSummarised) else []
        if isinstance(event, LeadTaken):
            facets = event.facets
        for facet in facets:
            if facet.status != "empty":
                self.facets[facet.name] = facet.status
        if not isinstance(event, FacetSummarised):
            self.fallbacks.extend(event.fallbacks)
        if isinstance(event, FacetsJoined):
            self.stage = "refining the draft"
        if isinstance(event, AbstractRefined):
            self.stage = "done"
        self.live.update(self._render())


SENTENCE_MARKS = {"certified": ("✓", "green"), "repaired": ("↺", "yellow")}
"""How each shown sentence is marked: certified as written, or repaired."""


def sentence_lines(result: AbstractResult, evidence: bool = False) -> Text:
    """Return the abstract's sentences, each marked, with its evidence on request.

    Dropped sentences are listed only with their evidence, where their reason is.
    """
    out = Text()
    for sentence in result.sentences:
        if sentence.status == "dropped" and not evidence:
            continue
        mark, style = SENTENCE_MARKS.get(sentence.status, ("✗", "red"))
        body = sentence.text if sentence.status != "dropped" else sentence.original
        out.append(f"{mark} ", style=style)
        out.append(body, style="dim" if sentence.status == "dropped" else "")
        out.append("\n")
        if evidence:
            if sentence.reason:
                out.append(f"    {sentence.status}: {sentence.reason}\n", style=style)
            for item in sentence.evidence:
                where = item.section or "(no heading)"
                out.append(f"    ¶{item.paragraph + 1} {where}: ", style="cyan")
                out.append(f"“{item.quote}”\n", style="italic")
    return out


def abstract_result(
    console: Console, result: AbstractResult, evidence: bool = False
) -> None:
    """Render an abstract (each sentence marked) and the table of its facets."""
    from rich.panel import Panel

    title = result.title or result.id
    # A panel reads a string title as markup: give it Text.
    console.print(Panel(result.abstract, title=Text(f"Abstract: {title}"), expand=True))
    if result.sentences:
        counts = result.sentence_counts
        console.print(sentence_lines(result, evidence))
        console.print(
            f"sentences against their evidence: {counts.get('certified', 0)} "
            f"certified ✓ · {counts.get('repaired', 0)} repaired ↺ · "
            f"{counts.get('dropped', 0)} dropped ✗"
            + ("" if evidence else " (--evidence shows each one's article sentences)")
        )
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
