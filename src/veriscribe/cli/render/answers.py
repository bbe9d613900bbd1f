"""Cited answers (``ask``, ``chat``, ``ask --questions``): progress, claims, chat."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

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

from veriscribe.cli.render.shared import _ends_clean, _PlainColumn, duration
from veriscribe.events import (
    ClaimJudged,
    ClaimsFound,
    OnStage,
    SectionsChosen,
    StageEvent,
)
from veriscribe.results import (
    COMPLIANT_TIERS,
    CheckedAnswer,
    Citation,
    Claim,
    ClaimStatus,
    QuestionSetSummary,
    SourceRead,
)

_STATUS_STYLE: dict[ClaimStatus, tuple[str, str]] = {
    "certified": ("✔", "green"),
    "recovered": ("↺", "cyan"),
    "partial": ("◐", "yellow"),
    "unsupported": ("✘", "red"),
    "uncited": ("○", "magenta"),
    "unjudged": ("?", "blue"),
}


_NEXT_STAGE: dict[str, str] = {
    "retrieve": "writing the answer",
    "answer": "finding the claims",
    "filter_claims": "checking citations and quotes",
    "verify": "judging claim support",
    "judge": "judging claim support",
    "join": "recovering missing support",
    "recover": "recovering missing support",
    "present": "done",
}
"""What runs once each stage is done."""


@contextmanager
def qa_progress(
    console: Console,
    first: str = "choosing sections",
) -> Iterator[OnStage]:
    """Show which stage of checking an answer is running, on stderr."""
    judged = 0
    # A spinner reads a string as markup: give it Text.
    with console.status(Text(f"{first}...")) as status:

        def update(event: StageEvent) -> None:
            nonlocal judged
            message = _NEXT_STAGE[event.stage]
            if isinstance(event, SectionsChosen):
                message = f"read {len(event.read_set)} sections; {message}"
            elif isinstance(event, ClaimJudged):
                judged += 1
                message = f"{message} ({judged} judged)"
            elif isinstance(event, ClaimsFound):
                message = f"{sum(event.is_claim)} claims; {message}"
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
    detail = Text()
    if claim.lead is not None:
        detail.append(f"{claim.lead.text}: ", style="bold")
    detail.append(claim.text)
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
    if result.lead is not None:
        # Read from the certified quote's own words, never written by a model.
        console.print(Text(result.lead.text, style="bold"))
    console.print(Text((result.answer_numbered or result.answer).strip()))
    if result.nearest:
        console.print(Text("Nearest sections, where to look:", style="dim"))
        for section in result.nearest:
            line = f"  {section.key}{_page_label(section.page)}"
            console.print(
                Text(f"{line}  {section.title}".rstrip(), style="dim"),
                soft_wrap=True,
            )
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
