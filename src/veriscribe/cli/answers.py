"""The cited-answer commands: ``ask``, ``chat`` and ``verify`` over a guideline corpus."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from veriscribe.cli import terminal
from veriscribe.cli.common import (
    BaseUrlOpt,
    CorpusOpt,
    EndpointOpt,
    EndpointsFileOpt,
    JsonOpt,
    ModelOpt,
    field_bounds,
    field_option,
    old_name,
    options_from_flags,
    renamed,
    run,
    settings_for,
)
from veriscribe.cli.failure import fail
from veriscribe.cli.output import present
from veriscribe.cli.render import answers as render
from veriscribe.cli.render.shared import error_line
from veriscribe.errors import InputError, VeriscribeError
from veriscribe.options import (
    Citations,
    CiteBy,
    JudgeMethod,
    QAOptions,
    Retriever,
    Selection,
    Wording,
)
from veriscribe.service import qa as qa_service
from veriscribe.settings import Settings

# No name: added to the root, these stay top-level commands.
app = typer.Typer()

DEFAULTS = QAOptions()
"""The options' defaults are the flags' defaults."""

RetrieverOpt = Annotated[Retriever, field_option(QAOptions, "retriever")]
KOpt = Annotated[int, field_option(QAOptions, "k")]
CandidatesOpt = Annotated[int, field_option(QAOptions, "candidates")]
JudgeOpt = Annotated[bool, field_option(QAOptions, "judge", "--judge/--no-judge")]
CitationsOpt = Annotated[Citations, field_option(QAOptions, "citations")]
CiteByOpt = Annotated[CiteBy, field_option(QAOptions, "cite_by")]
WordingOpt = Annotated[Wording, field_option(QAOptions, "wording")]
SelectOpt = Annotated[Selection, field_option(QAOptions, "select")]
MaxSentencesOpt = Annotated[int, field_option(QAOptions, "max_sentences")]
JudgeMethodOpt = Annotated[JudgeMethod, field_option(QAOptions, "judge_method")]


def qa_options(
    *,
    retriever: Retriever,
    k: int,
    candidates: int,
    judge: bool,
    citations: Citations,
    cite_by: CiteBy,
    wording: Wording,
    judge_method: JudgeMethod,
    select: Selection,
    max_sentences: int,
) -> QAOptions:
    """Return the answer options given on the command line."""
    return options_from_flags(
        QAOptions,
        retriever=retriever,
        k=k,
        candidates=candidates,
        judge=judge,
        citations=citations,
        cite_by=cite_by,
        wording=wording,
        judge_method=judge_method,
        select=select,
        max_sentences=max_sentences,
    )


@app.command()
def ask(
    question: Annotated[
        str | None,
        typer.Argument(help="The clinical question (or --questions FILE)."),
    ] = None,
    *,
    corpus: CorpusOpt,
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            help="Answer a question file into --out: one question a line, or JSON "
            "lines with `question` (gold fields, if any, are for scoring).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="With --questions: one result per line."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="With --questions: the first N only."),
    ] = None,
    retriever: RetrieverOpt = DEFAULTS.retriever,
    k: KOpt = DEFAULTS.k,
    candidates: CandidatesOpt = DEFAULTS.candidates,
    judge: JudgeOpt = DEFAULTS.judge,
    citations: CitationsOpt = DEFAULTS.citations,
    cite_by: CiteByOpt = DEFAULTS.cite_by,
    wording: WordingOpt = DEFAULTS.wording,
    select: SelectOpt = DEFAULTS.select,
    max_sentences: MaxSentencesOpt = DEFAULTS.max_sentences,
    judge_method: JudgeMethodOpt = DEFAULTS.judge_method,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Answer a question from a guideline corpus with checked verbatim citations."""
    settings = settings_for(model, base_url, endpoint, endpoints_file)
    options = qa_options(
        retriever=retriever,
        k=k,
        candidates=candidates,
        judge=judge,
        citations=citations,
        cite_by=cite_by,
        wording=wording,
        judge_method=judge_method,
        select=select,
        max_sentences=max_sentences,
    )
    if question is not None and questions is None:
        _ask_one(settings, corpus, question, options, json_out=json_out)
        return
    if question is not None or questions is None or out is None:
        fail("give either a QUESTION, or --questions FILE with --out FILE")
    _ask_set(settings, corpus, questions, out, options, limit=limit, json_out=json_out)


def _ask_one(
    settings: Settings,
    corpus: str,
    question: str,
    options: QAOptions,
    *,
    json_out: bool,
) -> None:
    """Answer one question, its stages shown as they end, and show the answer."""
    present(
        lambda on_stage: qa_service.ask(
            settings,
            corpus,
            question,
            options=options,
            on_stage=on_stage,
        ),
        partial(render.qa_result, errors=terminal.stderr),
        json_out=json_out,
        live=render.qa_progress,
    )


def _ask_set(
    settings: Settings,
    corpus: str,
    questions: Path,
    out: Path,
    options: QAOptions,
    *,
    limit: int | None,
    json_out: bool,
) -> None:
    """Answer a question set into ``out``, with its progress; show its report."""
    present(
        lambda on_answer: qa_service.ask_questions(
            settings,
            corpus,
            questions,
            out,
            options=options,
            limit=limit,
            on_answer=on_answer,
        ),
        render.answer_set_report,
        json_out=json_out,
        live=render.answer_set_progress,
    )


@app.command()
def chat(
    *,
    corpus: CorpusOpt,
    session: Annotated[
        str | None,
        typer.Option("--session", help="Resume the chat with this session id."),
    ] = None,
    retriever: RetrieverOpt = DEFAULTS.retriever,
    k: KOpt = DEFAULTS.k,
    candidates: CandidatesOpt = DEFAULTS.candidates,
    judge: JudgeOpt = DEFAULTS.judge,
    citations: CitationsOpt = DEFAULTS.citations,
    cite_by: CiteByOpt = DEFAULTS.cite_by,
    wording: WordingOpt = DEFAULTS.wording,
    select: SelectOpt = DEFAULTS.select,
    max_sentences: MaxSentencesOpt = DEFAULTS.max_sentences,
    judge_method: JudgeMethodOpt = DEFAULTS.judge_method,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
) -> None:
    """Chat with a guideline corpus; every claim of every answer is checked."""
    settings = settings_for(model, base_url, endpoint, endpoints_file)
    options = qa_options(
        retriever=retriever,
        k=k,
        candidates=candidates,
        judge=judge,
        citations=citations,
        cite_by=cite_by,
        wording=wording,
        judge_method=judge_method,
        select=select,
        max_sentences=max_sentences,
    )
    run(chat_loop(settings, corpus, session, options))


async def chat_loop(
    settings: Settings,
    corpus: str,
    session_id: str | None,
    options: QAOptions,
) -> None:
    """Run the chat: read questions, answer and check each, until /quit or EOF."""
    async with qa_service.ChatSession.open(
        settings, corpus, session_id=session_id, options=options
    ) as session:
        render.chat_banner(
            terminal.stdout, corpus, session.session_id, len(await session.history())
        )
        while True:
            line = await asyncio.to_thread(_read_line)
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit", "/q"):
                break
            if text == "/sources":
                render.chat_sources(terminal.stdout, await session.sources())
                continue
            if text.startswith("/"):
                error_line(
                    terminal.stderr, f"unknown command {text}: use /sources or /quit"
                )
                continue
            try:
                with render.qa_progress(terminal.stderr) as show:
                    result = await session.ask(text, on_stage=show)
            except (InputError, VeriscribeError) as exc:
                error_line(terminal.stderr, exc.user_message)
                continue
            render.qa_result(terminal.stdout, result, errors=terminal.stderr)
        render.chat_goodbye(terminal.stdout, session.session_id)


def _read_line() -> str | None:
    try:
        return input(render.chat_prompt())
    except EOFError:
        return None


@app.command()
def verify(
    answer: Annotated[
        str,
        typer.Argument(
            help="File holding the answer (text with citation markers, or the "
            "JSON of `ask --json`), or - for standard input."
        ),
    ],
    *,
    corpus: CorpusOpt,
    question: Annotated[
        str | None,
        typer.Option("--question", help="The question the answer answers."),
    ] = None,
    window: Annotated[int, field_option(QAOptions, "window")] = DEFAULTS.window,
    window_k: Annotated[
        int | None, old_name("--k", "--window", field_bounds(QAOptions, "window"))
    ] = None,
    judge: JudgeOpt = DEFAULTS.judge,
    all_claims: Annotated[
        bool, field_option(QAOptions, "all_claims")
    ] = DEFAULTS.all_claims,
    judge_method: JudgeMethodOpt = DEFAULTS.judge_method,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Check an answer that carries {{cite:doc:section|quote}} markers."""
    settings = settings_for(model, base_url, endpoint, endpoints_file)
    window = renamed(window, window_k, "--k", "--window")
    given = read_answer(answer)
    present(
        lambda on_stage: qa_service.verify_answer(
            given.answer,
            corpus=corpus,
            question=question if question is not None else given.question,
            k=window,
            judge=judge,
            all_claims=all_claims,
            judge_method=judge_method,
            read_set=given.read_set,
            settings=settings,
            on_stage=on_stage,
        ),
        partial(render.qa_result, errors=terminal.stderr),
        json_out=json_out,
        live=lambda console: render.qa_progress(console, "finding the claims"),
    )


@dataclass
class GivenAnswer:
    """An answer to verify, as read from a file or standard input."""

    answer: str
    question: str = ""
    read_set: list[str] | None = None


def read_answer(source: str) -> GivenAnswer:
    """Read the answer to verify: text with markers, or the JSON of ``ask --json``."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text("utf-8")
    except OSError as exc:
        fail(f"{source}: cannot be read ({exc.strerror})")
    except UnicodeDecodeError as exc:
        fail(f"{source}: not UTF-8 text ({exc.reason})")
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("answer"), str):
            read_set = data.get("read_set")
            return GivenAnswer(
                answer=data["answer"],
                question=str(data.get("question") or ""),
                read_set=[str(k) for k in read_set]
                if isinstance(read_set, list)
                else None,
            )
    return GivenAnswer(answer=text)
