"""`veriscribe eval make-questions`: a gated synthetic question set for any corpus.

One checkpointed graph thread per configuration (corpus contents, N, styles, seed,
minimum section length, model and prompts): running the same command again after a
crash resumes it, and after it finished rewrites the output from the checkpoint
without any model call. The output is JSON lines in the cpgQA layout that
``veriscribe eval retrieval`` reads: ``id``, ``question``, ``style``, ``doc_id``,
``section_id`` and ``passage_id`` (the section id), plus how the item was made.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypedDict

from veriscribe.checks.question_gates import GATES
from veriscribe.errors import InputError
from veriscribe.eval.reports import QuestionSetReport
from veriscribe.graphs.questions import build_questions_graph
from veriscribe.graphs.runner import GraphRunner, ThreadRun, thread_key
from veriscribe.llm.client import LLM
from veriscribe.llm.factory import make_llm
from veriscribe.nodes.questions import (
    MIN_WORDS,
    STYLES,
    QuestionDeps,
    QuestionItem,
    QuestionsState,
)
from veriscribe.prompts import load_prompt
from veriscribe.results import Usage
from veriscribe.service.common import open_store
from veriscribe.service.corpora import require_corpus
from veriscribe.settings import Settings
from veriscribe.store import corpora
from veriscribe.store.db import Store
from veriscribe.store.files import write_atomically

__all__ = ["make_questions", "parse_styles"]

OnItem = Callable[[QuestionItem, int], None]
"""Progress: called with each finished item and the number of slots."""


class QuestionRecord(TypedDict):
    """One line of a question set: the cpgQA layout plus provenance."""

    id: str
    question: str | None
    style: str
    doc_id: str
    section_id: str
    passage_id: str
    section_title: str
    attempts: int
    gates: dict[str, str]
    regenerated_because: list[str]
    model: str
    prompt_id: str


def parse_styles(text: str) -> list[str]:
    """Parse ``lookup,scenario,sdm`` (any subset, in the given order)."""
    styles = list(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    unknown = [s for s in styles if s not in STYLES]
    if unknown or not styles:
        raise InputError(
            f"--styles takes a comma-separated subset of {', '.join(STYLES)}, "
            f"not {text!r}"
        )
    return styles


def output_record(corpus: str, item: QuestionItem, model: str) -> QuestionRecord:
    """Return the output line of a kept question (cpgQA layout plus provenance)."""
    return {
        "id": f"{corpus}-q{item['slot'] + 1:04d}",
        "question": item["question"],
        "style": item["style"],
        "doc_id": item["doc_id"],
        "section_id": item["section_id"],
        "passage_id": item["section_id"],
        "section_title": item["section_title"],
        "attempts": item["attempts"],
        "gates": dict.fromkeys(GATES, "pass"),
        "regenerated_because": [f for r in item["rejected"] for f in r["failed"]],
        "model": model,
        "prompt_id": item["prompt_id"],
    }


def _write(path: Path, lines: Sequence[QuestionRecord]) -> None:
    try:
        write_atomically(
            path, (json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        )
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from exc


async def make_questions(
    settings: Settings,
    corpus: str,
    n: int,
    out: Path,
    *,
    styles: Sequence[str] = STYLES,
    seed: int = 0,
    min_words: int = MIN_WORDS,
    llm: LLM | None = None,
    on_item: OnItem | None = None,
) -> QuestionSetReport:
    """Generate, gate and write a question set; resume an interrupted one.

    ``llm`` overrides the settings' model: a client built by the caller (any chat
    model).

    Returns:
        The summary: counts kept and dropped (with the reasons), regenerated, per
        style and document, sections skipped, model usage and the thread id.
    """
    if n < 1:
        raise InputError("--n must be at least 1")
    started = time.perf_counter()
    async with open_store(settings) as store:
        await require_corpus(store, corpus)
        if llm is None:
            llm = make_llm(settings.model, settings, store)
        thread_id = await _thread_id(
            store, corpus, n, styles, seed=seed, min_words=min_words, llm=llm
        )
        runner = await GraphRunner.open(
            build_questions_graph(), store, max_concurrency=llm.settings.concurrency
        )
        total = len((await runner.state(thread_id)).get("slots") or []) or n

        def progress(item: QuestionItem) -> None:
            if on_item is not None:
                on_item(item, total)

        graph_input: QuestionsState = {
            "corpus": corpus,
            "n": n,
            "styles": list(styles),
            "seed": seed,
            "min_words": min_words,
        }
        run = await runner.run(
            thread_id,
            graph_input,
            QuestionDeps(store=store, llm=llm, on_item=progress),
            finished=lambda values: values.get("slots") is not None,
        )
        items = sorted(run.values.get("items", []), key=lambda i: i["slot"])
        kept = [i for i in items if i["question"] is not None]
        _write(out, [output_record(corpus, i, llm.label) for i in kept])
        usage = await runner.usage(run)
    return _question_set_report(
        run,
        items,
        out,
        corpus,
        n,
        styles,
        seed=seed,
        model=llm.label,
        usage=usage,
        seconds=round(time.perf_counter() - started, 2),
    )


async def _thread_id(
    store: Store,
    corpus: str,
    n: int,
    styles: Sequence[str],
    *,
    seed: int,
    min_words: int,
    llm: LLM,
) -> str:
    """Return the question set's thread: the corpus version, options, model, prompts."""
    version = await corpora.corpus_version(store, corpus)
    prompt_ids = [load_prompt("questions", s).id for s in styles]
    return thread_key(
        "questions",
        corpus,
        version,
        n,
        list(styles),
        seed,
        min_words,
        llm.identity,
        prompt_ids,
    )


def _question_set_report(
    run: ThreadRun,
    items: list[QuestionItem],
    out: Path,
    corpus: str,
    n: int,
    styles: Sequence[str],
    *,
    seed: int,
    model: str,
    usage: Usage,
    seconds: float,
) -> QuestionSetReport:
    """Return the summary of a question set's items, kept and dropped."""
    state = run.values
    slots = state.get("slots", [])
    kept = [i for i in items if i["question"] is not None]
    dropped = [i for i in items if i["question"] is None]
    notes = []
    if len(slots) < n:
        notes.append(
            f"only {len(slots)} of {n} questions could be sampled: the corpus has "
            f"{state.get('eligible', 0)} eligible sections and {len(styles)} styles"
        )
    return QuestionSetReport(
        out=str(out),
        corpus=corpus,
        requested=n,
        slots=len(slots),
        kept=len(kept),
        dropped=len(dropped),
        dropped_by_reason=_counted(i["dropped"] for i in dropped),
        regenerated=sum(bool(i["rejected"]) for i in kept),
        regenerated_by_reason=_counted(
            r["failed"] for i in items for r in i["rejected"][:1]
        ),
        by_style=dict(Counter(i["style"] for i in kept)),
        documents=len({i["doc_id"] for i in kept}),
        eligible_sections=state.get("eligible", 0),
        skipped_sections=state.get("skipped", {}),
        styles=list(styles),
        seed=seed,
        model=model,
        thread_id=run.thread_id,
        resumed=run.resumed,
        reused=run.reused,
        usage=usage,
        seconds=seconds,
        notes=notes,
    )


def _counted(reasons: Iterable[list[str]]) -> dict[str, int]:
    """Count the reasons (gates failed) over every list, in the reasons' order."""
    return dict(
        sorted(Counter(reason for found in reasons for reason in found).items())
    )
