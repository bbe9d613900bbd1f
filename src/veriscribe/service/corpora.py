"""Guideline corpora: add documents (with summaries written at ingest), list, show."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

from veriscribe.documents.guidelines import (
    GuidelineDoc,
    UniqueNames,
    read_guideline_path,
)
from veriscribe.documents.sandbox import READ_STOP, ReadLimits
from veriscribe.errors import InputError, NotFound, VeriscribeError
from veriscribe.llm.client import LLM
from veriscribe.llm.factory import make_llm
from veriscribe.results import (
    CorpusDetails,
    CorpusListing,
    DocumentListing,
    IngestReport,
    SectionListing,
    SectionText,
)
from veriscribe.retrieval import minilm
from veriscribe.retrieval.fused import section_docs, stored_vectors
from veriscribe.retrieval.section_summaries import (
    BatchResult,
    batches,
    summarize_sections,
)
from veriscribe.service.common import open_store
from veriscribe.settings import Settings
from veriscribe.store import corpora as db
from veriscribe.store.db import Store

Stage = Literal["read", "store", "summarize", "embed"]


@dataclass(frozen=True)
class IngestProgress:
    """A step of adding documents to a corpus, for a progress display."""

    stage: Stage
    done: int
    total: int
    detail: str = ""


ProgressFn = Callable[[IngestProgress], None]


# Exactly the rule the error message states.
_CORPUS_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def _check_name(name: str) -> None:
    if not _CORPUS_NAME.fullmatch(name):
        raise InputError(
            f"invalid corpus name {name!r}: use 1 to 64 ASCII letters, digits, '-', "
            "'_' or '.', starting with a letter or digit"
        )


def read_documents(
    paths: Sequence[Path],
    skipped: list[dict[str, str]],
    max_bytes: int | None = None,
    limits: ReadLimits | None = None,
    *,
    max_sections: int | None = None,
    shown: Callable[[Path], str] = str,
) -> list[GuidelineDoc]:
    """Read guideline documents from files and directories, doc ids made unique.

    A file that cannot be read is recorded in ``skipped`` (``path`` and ``reason``,
    one entry each) and the others are read, whether it was named or found in a
    directory.

    Args:
        paths: Files and directories (read recursively).
        skipped: Where the files that cannot be read are recorded.
        max_bytes: Largest file read (None: no limit).
        limits: The reader process's time budget and memory cap (None: the
            settings' limits).
        max_sections: Most sections a document may have (None: no limit); one with
            more is skipped.
        shown: How a path is named in ``skipped`` (the server names its uploads by
            their file names, never by where it keeps them).
    """
    docs: list[GuidelineDoc] = []
    seen = UniqueNames()

    def skip(path: Path, error: InputError) -> None:
        name = shown(path)
        reason = error.user_message.replace(str(path), name)
        skipped.append({"path": name, "reason": reason})

    for path in paths:
        before = len(skipped)
        try:
            found = read_guideline_path(
                path, on_error=skip, max_bytes=max_bytes, limits=limits
            )
        except InputError as exc:
            if len(skipped) == before:  # else each bad file of it is reported
                skip(path, exc)
            continue
        for doc in found:
            if max_sections is not None and len(doc.sections) > max_sections:
                skip(Path(doc.source), too_many_sections(doc, max_sections))
                continue
            doc.doc_id = seen.take(doc.doc_id)
            for section in doc.sections:
                section.doc_id = doc.doc_id
            docs.append(doc)
    return docs


def too_many_sections(doc: GuidelineDoc, max_sections: int) -> InputError:
    """Return the refusal of a document with more than ``max_sections`` sections."""
    return InputError(
        f"{doc.source}: {len(doc.sections):,} sections, over the {max_sections:,} "
        "limit for one document (each costs a summary at ingest; raise it with "
        "VERISCRIBE_MAX_SECTIONS)"
    )


def nothing_read(skipped: list[dict[str, str]]) -> InputError:
    """Return the error of an ingest none of whose inputs could be read."""
    reasons = [item["reason"] for item in skipped]
    if len(reasons) == 1:
        return InputError(reasons[0])
    return InputError(f"no document could be read: {'; '.join(reasons)}")


async def add_corpus(
    settings: Settings,
    name: str,
    paths: Sequence[Path],
    *,
    on_progress: ProgressFn | None = None,
    shown: Callable[[Path], str] = str,
) -> IngestReport:
    """Add guideline documents to a corpus (created if new) and summarise new sections.

    Unchanged documents are left as they are. Summaries are stored batch by batch, so
    an interrupted ingest resumes where it stopped when run again. A file that cannot
    be read is listed in the report's ``skipped`` and the others are added; ``shown``
    names the files there.

    Raises:
        InputError: The corpus name is invalid, or not one document could be read.
    """
    _check_name(name)
    report = IngestReport(corpus=name)
    started = time.perf_counter()

    def progress(stage: Stage, done: int, total: int, detail: str = "") -> None:
        if on_progress is not None:
            on_progress(IngestProgress(stage, done, total, detail))

    progress("read", 0, len(paths))
    # In a thread: a server's event loop goes on answering while files are read;
    # cancelled (Ctrl-C, a client gone), the thread stops at once too.
    stop = threading.Event()
    token = READ_STOP.set(stop.is_set)
    try:
        docs = await asyncio.to_thread(
            partial(
                read_documents,
                paths,
                report.skipped,
                settings.max_input_bytes,
                ReadLimits.from_settings(settings),
                max_sections=settings.max_sections,
                shown=shown,
            )
        )
    except asyncio.CancelledError:
        stop.set()
        raise
    finally:
        READ_STOP.reset(token)
    if not docs:
        raise nothing_read(report.skipped)
    progress("read", len(paths), len(paths))
    async with open_store(settings) as store:
        await db.ensure_corpus(store, name)
        for done, doc in enumerate(docs, start=1):
            before = await db.document_hash(store, name, doc.doc_id)
            stored = await db.store_document(store, name, doc)
            if not stored.changed:
                report.unchanged.append(doc.doc_id)
            elif before is None:
                report.added.append(doc.doc_id)
            else:
                report.changed.append(doc.doc_id)
            report.sections += stored.sections
            progress("store", done, len(docs), doc.doc_id)
        pending = await db.pending_sections(store, name)
        if pending:
            llm = make_llm(settings.model, settings, store)
            report.model = llm.label
            await _summarize(store, llm, name, pending, report, progress)
        await _embed(store, name, progress)
        counts: dict[str, int] = {}
        for section in await db.sections(store, name):
            source = section.summary_source or "missing"
            counts[source] = counts.get(source, 0) + 1
        report.summaries = counts
    report.seconds = round(time.perf_counter() - started, 2)
    return report


async def _embed(
    store: Store, corpus: str, progress: Callable[[Stage, int, int, str], None]
) -> None:
    """Make the sentence vectors the default retriever reads (when the encoder is installed)."""
    if not minilm.available():
        return
    titles = {doc.doc_id: doc.title for doc in await db.documents(store, corpus)}
    found = section_docs(await db.sections(store, corpus, with_text=True), titles)
    await stored_vectors(
        store,
        corpus,
        found,
        minilm.minilm(),
        on_progress=lambda done, total: progress("embed", done, total, ""),
    )


async def _summarize(
    store: Store,
    llm: LLM,
    corpus: str,
    pending: list[db.SectionRow],
    report: IngestReport,
    progress: Callable[[Stage, int, int, str], None],
) -> None:
    total = len(pending)
    done = 0
    progress("summarize", 0, total, "")

    async def one(batch: list[db.SectionRow]) -> BatchResult:
        attempt = 0
        while True:
            try:
                return await summarize_sections(llm, batch)
            except VeriscribeError as exc:
                attempt += 1
                if not exc.retryable or attempt > llm.settings.retries:
                    raise
                await asyncio.sleep(min(2.0**attempt, 30.0))

    async def run(batch: list[db.SectionRow]) -> None:
        nonlocal done
        result = await one(batch)
        await db.set_summaries(store, corpus, result.updates)
        report.usage = report.usage + result.usage
        done += len(batch)
        progress("summarize", done, total, batch[-1].key)

    # The client's semaphore bounds how many calls are in flight at once.
    await asyncio.gather(*(run(batch) for batch in batches(pending)))


async def list_corpora(settings: Settings) -> list[CorpusListing]:
    """Return every corpus with its size."""
    async with open_store(settings) as store:
        found = await db.list_corpora(store)
    return [CorpusListing.model_validate(c, from_attributes=True) for c in found]


async def show_corpus(settings: Settings, name: str) -> CorpusDetails:
    """Return a corpus's documents and sections (``corpus show --json``)."""
    async with open_store(settings) as store:
        await require_corpus(store, name)
        docs = await db.documents(store, name)
        rows = await db.sections(store, name)
    return CorpusDetails(
        name=name,
        documents=[
            DocumentListing.model_validate(doc, from_attributes=True) for doc in docs
        ],
        sections=[
            SectionListing.model_validate(row, from_attributes=True) for row in rows
        ],
    )


async def section_text(settings: Settings, name: str, key: str) -> SectionText:
    """Return one section of a corpus with its text, by its key ``doc:section``.

    Raises:
        NotFound: No such corpus, or no such section in it.
    """
    async with open_store(settings) as store:
        await require_corpus(store, name)
        found = await db.get_sections(store, name, [key])
    section = found.get(key)
    if section is None:
        raise NotFound(f"no section {key!r} in corpus {name!r}")
    return SectionText(
        corpus=name,
        doc_id=section.doc_id,
        section_id=section.section_id,
        number=section.number,
        title=section.title,
        text=section.text,
    )


async def require_corpus(store: Store, name: str) -> None:
    """Raise NotFound unless the corpus exists and holds sections."""
    if not await db.corpus_exists(store, name):
        raise NotFound(
            f"no corpus named {name!r}; add documents with "
            f"`veriscribe corpus add {name} PATH...`"
        )
