"""Cited answers: ask a corpus, check any answer, chat; each run a checkpointed thread."""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veriscribe.checks.markers import parse_markers
from veriscribe.documents.guidelines import section_key
from veriscribe.documents.questions import is_hit, read_questions
from veriscribe.errors import ConstraintError, ContextOverflow, InputError
from veriscribe.events import OnStage
from veriscribe.graphs.cited_qa import build_cited_qa_graph
from veriscribe.graphs.qa_stages import stage_watcher
from veriscribe.graphs.runner import GraphRunner, thread_key
from veriscribe.llm.client import LLM
from veriscribe.llm.factory import make_llm
from veriscribe.nodes.qa.answer import is_not_found
from veriscribe.nodes.qa.present import result_of
from veriscribe.nodes.qa.state import QADeps, QAState, Turn, turn_input
from veriscribe.options import JudgeMethod, QAOptions
from veriscribe.results import (
    AnswerOptions,
    CheckedAnswer,
    Citation,
    GraphAnswer,
    QuestionFailure,
    QuestionSetAnswer,
    QuestionSetSummary,
    SourceRead,
    TokenUsage,
    Usage,
)
from veriscribe.service.common import open_store
from veriscribe.service.corpora import require_corpus
from veriscribe.settings import Settings
from veriscribe.store import corpora as db
from veriscribe.store.db import Store
from veriscribe.store.files import write_atomically


async def qa_runner(store: Store, max_attempts: int = 3) -> GraphRunner:
    """Return a runner of the cited-QA graph over the store's checkpointer."""
    return await GraphRunner.open(
        build_cited_qa_graph(max_attempts), store, max_concurrency=4
    )


def _answered(values: Mapping[str, Any]) -> bool:
    """Tell whether a thread holds a result (a failed answer is tried again)."""
    stored = values.get("result") or {}
    return bool(stored) and not stored.get("error")


@dataclass(frozen=True)
class ThreadAnswer:
    """A thread's checked answer, and what only the service knows of its run."""

    answer: GraphAnswer
    thread_id: str
    reused: bool
    usage: Usage
    seconds: float


async def run_thread(
    graph: GraphRunner,
    deps: QADeps,
    thread_id: str,
    graph_input: QAState,
    *,
    reuse: bool = True,
    on_stage: OnStage | None = None,
) -> ThreadAnswer:
    """Run one question (or answer check) on a thread; resume or reuse what it holds.

    An interrupted run of the same question resumes from its last checkpoint; with
    ``reuse`` a finished one is returned as it is, without running again.
    """
    run = await graph.run(
        thread_id,
        graph_input,
        deps,
        finished=lambda values: reuse and _answered(values),
        resumable=lambda values: values.get("question") == graph_input.get("question"),
        max_concurrency=deps.llm.settings.concurrency if deps.llm else None,
        on_update=None if on_stage is None else stage_watcher(on_stage),
    )
    answer = result_of(run.values)
    if answer is None:
        raise RuntimeError(f"the thread {thread_id} ended without an answer")
    usage = await graph.usage(run)
    return ThreadAnswer(answer, thread_id, run.reused, usage, round(run.seconds, 3))


def _checked(
    made: ThreadAnswer, corpus: str, options: QAOptions, llm: LLM | None
) -> CheckedAnswer:
    """Return a thread's answer as the checked answer, with what made it."""
    return CheckedAnswer(
        **dict(made.answer),
        thread_id=made.thread_id,
        reused=made.reused,
        usage=made.usage,
        seconds=made.seconds,
        corpus=corpus,
        model=llm.label if llm else None,
        options=AnswerOptions.model_validate(
            {name: getattr(options, name) for name in AnswerOptions.model_fields}
        ),
    )


class WarmIndexes:
    """A corpus's sections, indexes and vectors kept between questions by one process.

    A new process (``ask``) reads the sections, builds the BM25 and fused indexes and
    reads the sentence vectors back from the store before its first question;
    ``serve`` holds one of these and does that once per database, corpus and corpus
    version (a changed corpus has a new version and is read again). At most ``most``
    corpora are kept, the least recently asked dropped.
    """

    def __init__(self, most: int = 4) -> None:
        self.most = most
        self._kept: OrderedDict[
            tuple[str, str, str], tuple[dict[Any, Any], dict[str, Any]]
        ] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def corpora(self) -> list[str]:
        """Return the corpora kept, the least recently asked first."""
        return [corpus for _, corpus, _ in self._kept]

    async def deps(
        self,
        store: Store,
        settings: Settings,
        corpus: str,
        llm: LLM,
        options: QAOptions,
    ) -> QADeps:
        """Return the dependencies of one question, sharing what was built before."""
        key = (str(settings.db), corpus, await db.corpus_version(store, corpus))
        sections, indexes = self._kept.pop(key, ({}, {}))
        self._kept[key] = (sections, indexes)
        while len(self._kept) > self.most:
            self._kept.popitem(last=False)
        return QADeps(
            store=store, llm=llm, options=options, _sections=sections, _indexes=indexes
        )


async def ask(
    settings: Settings,
    corpus: str,
    question: str,
    *,
    options: QAOptions | None = None,
    on_stage: OnStage | None = None,
    warm: WarmIndexes | None = None,
) -> CheckedAnswer:
    """Answer a question from a corpus with checked verbatim citations.

    ``warm``: the indexes a long-running process keeps between questions.
    """
    if not question.strip():
        raise InputError("the question is empty")
    opts = options or QAOptions()
    async with open_store(settings) as store:
        await require_corpus(store, corpus)
        llm = make_llm(settings.model, settings, store)
        version = await db.corpus_version(store, corpus)
        tid = thread_key("qa", corpus, version, question, opts.key(), llm.identity)
        graph = await qa_runner(store, llm.settings.retries + 1)
        deps = (
            QADeps(store=store, llm=llm, options=opts)
            if warm is None
            else await warm.deps(store, settings, corpus, llm, opts)
        )
        result = await run_thread(
            graph,
            deps,
            tid,
            turn_input("ask", corpus, question),
            on_stage=on_stage,
        )
        return _checked(result, corpus, opts, llm)


def cited_sections(answer: str) -> list[str]:
    """Return the keys of the sections an answer's markers cite, in order."""
    keys = [section_key(m.doc_id, m.section_id) for m in parse_markers(answer)]
    return list(dict.fromkeys(keys))


async def verify_answer(
    answer: str,
    *,
    corpus: str,
    question: str = "",
    k: int = 1,
    judge: bool = True,
    all_claims: bool = False,
    judge_method: JudgeMethod = "scored",
    read_set: Sequence[str] | None = None,
    settings: Settings | None = None,
    on_stage: OnStage | None = None,
) -> CheckedAnswer:
    """Check an answer that carries ``{{cite:doc:section|quote}}`` markers.

    Runs the tail of the cited-QA graph (filter claims, verify, judge, recover,
    present) and returns the same fields as ``ask``.

    Args:
        answer: The answer text with its citation markers.
        corpus: The corpus whose sections the markers cite.
        question: The question the answer answers (shown to the judge), if known.
        k: The attribution window.
        judge: Run the support judge and recovery; without it only the deterministic
            checks run (claim units, coverage, verbatim tiers).
        all_claims: Treat every sentence as a claim instead of asking the model.
            With ``judge=False`` too, no model is needed at all.
        judge_method: ``scored`` or ``sampled`` (see the judge node).
        read_set: The section keys (``doc:section``) the answer was written from,
            searched by recovery; default: the sections the answer cites.
        settings: Settings, the model among them (default: from the environment).
        on_stage: Called with each step's event (:mod:`veriscribe.events`).
    """
    settings = settings or Settings()
    if not answer.strip():
        raise InputError("the answer to verify is empty")
    if k < 0:
        raise InputError("the attribution window k must be 0 or more")
    options = QAOptions(
        window=k, judge=judge, all_claims=all_claims, judge_method=judge_method
    )
    async with open_store(settings) as store:
        await require_corpus(store, corpus)
        needs_model = judge or not all_claims
        llm = make_llm(settings.model, settings, store) if needs_model else None
        keys = list(read_set) if read_set is not None else cited_sections(answer)
        found = await db.get_sections(store, corpus, keys)
        keys = [key for key in keys if key in found]
        version = await db.corpus_version(store, corpus)
        tid = thread_key(
            "verify",
            corpus,
            version,
            answer,
            question,
            keys,
            options.key(),
            llm.identity if llm else None,
            prompts="qa",
        )
        graph = await qa_runner(store, (llm.settings.retries + 1) if llm else 1)
        deps = QADeps(store=store, llm=llm, options=options)
        graph_input = turn_input(
            "verify",
            corpus,
            question,
            answer=answer,
            read_set=keys,
            not_found=is_not_found(answer),
        )
        result = await run_thread(graph, deps, tid, graph_input, on_stage=on_stage)
        return _checked(result, corpus, options, llm)


class ChatSession:
    """A multi-turn chat over a corpus; its history lives in the checkpointer."""

    def __init__(
        self,
        store: Store,
        graph: GraphRunner,
        deps: QADeps,
        corpus: str,
        session_id: str,
    ) -> None:
        self.store = store
        self.graph = graph
        self.deps = deps
        self.corpus = corpus
        self.session_id = session_id
        self.thread_id = f"chat:{corpus}:{session_id}"
        self.last: CheckedAnswer | None = None

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        settings: Settings,
        corpus: str,
        *,
        session_id: str | None = None,
        options: QAOptions | None = None,
        warm: WarmIndexes | None = None,
    ) -> AsyncIterator[ChatSession]:
        """Open a chat (a new one, or the one named ``session_id`` to resume it).

        ``warm``: the indexes a long-running process keeps between questions.
        """
        async with open_store(settings) as store:
            await require_corpus(store, corpus)
            llm = make_llm(settings.model, settings, store)
            graph = await qa_runner(store, llm.settings.retries + 1)
            opts = options or QAOptions()
            deps = (
                QADeps(store=store, llm=llm, options=opts)
                if warm is None
                else await warm.deps(store, settings, corpus, llm, opts)
            )
            session = cls(
                store, graph, deps, corpus, session_id or uuid.uuid4().hex[:8]
            )
            saved = result_of(await graph.state(session.thread_id))
            if saved is not None:
                last = ThreadAnswer(saved, session.thread_id, True, Usage(), 0.0)
                session.last = _checked(last, corpus, deps.options, llm)
            yield session

    async def history(self) -> list[Turn]:
        """Return the questions and answers of this chat so far."""
        return list((await self.graph.state(self.thread_id)).get("history", []))

    async def ask(
        self, question: str, on_stage: OnStage | None = None
    ) -> CheckedAnswer:
        """Answer the next question of the chat."""
        if not question.strip():
            raise InputError("the question is empty")
        result = await run_thread(
            self.graph,
            self.deps,
            self.thread_id,
            turn_input("ask", self.corpus, question),
            reuse=False,
            on_stage=on_stage,
        )
        self.last = _checked(result, self.corpus, self.deps.options, self.deps.llm)
        return self.last

    async def sources(self) -> list[SourceRead]:
        """Return the sections read for the last answer, with the quotes cited from each."""
        if self.last is None:
            return []
        keys = self.last.read_set
        rows = await self.deps.sections(self.corpus, keys)
        quotes: dict[str, list[Citation]] = {}
        for citation in self.last.citations:
            key = section_key(citation.doc_id, citation.section_id)
            quotes.setdefault(key, []).append(citation)
        return [
            SourceRead(
                key=key,
                title=rows[key].title if key in rows else "",
                number=rows[key].number if key in rows else "",
                chars=rows[key].chars if key in rows else 0,
                summary=rows[key].summary if key in rows else None,
                citations=quotes.get(key, []),
                page=rows[key].page if key in rows else None,
            )
            for key in keys
        ]


def _check_writable(out: Path) -> None:
    """Refuse, before any model call, an output whose directory cannot be written."""
    directory = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise InputError(f"cannot write {out}: it is a directory")
    if not directory.is_dir() or not os.access(directory, os.W_OK | os.X_OK):
        raise InputError(f"cannot write {out}: {directory} is not a writable directory")


OnAnswer = Callable[[QuestionSetAnswer, int, int], None]
"""Progress of a question set: a result, how many are done, how many in all."""


async def ask_questions(
    settings: Settings,
    corpus: str,
    questions_path: Path,
    out: Path,
    *,
    options: QAOptions | None = None,
    limit: int | None = None,
    on_answer: OnAnswer | None = None,
) -> QuestionSetSummary:
    """Answer every question of a set and write one checked result per line.

    Each question is its own checkpointed thread, so running the same set again reuses
    the finished answers without a model call and continues where a crash stopped. The
    output is written afresh, whole, once every question is done: until then ``out``
    keeps what it held. A question whose answer cannot be made (it is
    empty, or too long for the model's context) is counted with its reason; a backend
    that fails stops the run.

    Returns:
        The summary: answered, failed (with reasons), reused, model usage, and how many
        answers read their question's gold section.
    """
    questions = read_questions(questions_path, limit)
    failures: list[QuestionFailure] = []
    answered = reused = gold_read = 0
    usage = TokenUsage()
    started = time.perf_counter()
    _check_writable(out)
    lines: list[str] = []
    for done, item in enumerate(questions, 1):
        try:
            result = await ask(settings, corpus, item["question"], options=options)
        except (ContextOverflow, ConstraintError, InputError) as exc:
            failures.append(QuestionFailure(id=item["id"], reason=exc.user_message))
            continue
        hit = any(is_hit(item["gold"], key) for key in result.read_set)
        line = QuestionSetAnswer(
            **dict(result),
            id=item["id"],
            gold_section=item["gold"],
            gold_read=hit,
            gold_answer=item["answer"],
            answerable=item["answerable"],
        )
        fields = line.model_dump(mode="json")
        first = {"id": fields.pop("id"), "gold_section": fields.pop("gold_section")}
        lines.append(json.dumps(first | fields, ensure_ascii=False) + "\n")
        answered += 1
        reused += line.reused
        gold_read += hit
        usage += line.usage
        if on_answer is not None:
            on_answer(line, done, len(questions))
    # Written whole once every question is answered: an interrupted or failed run
    # leaves the file as it was, and its answers are in their threads for the rerun.
    try:
        await asyncio.to_thread(write_atomically, out, lines)
    except OSError as exc:
        raise InputError(f"cannot write {out}: {exc.strerror or exc}") from exc
    return QuestionSetSummary(
        out=str(out),
        corpus=corpus,
        questions=len(questions),
        answered=answered,
        reused=reused,
        failed=failures,
        gold_read=gold_read,
        usage=usage,
        seconds=round(time.perf_counter() - started, 2),
    )
