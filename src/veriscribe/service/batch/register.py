"""Registering a run's items: reading the inputs, and the lines of items that failed."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from veriscribe.documents.articles import (
    Article,
    ReadFailure,
    WalkStopped,
    expand_input,
    read_articles,
)
from veriscribe.documents.sandbox import READ_STOP, ReadingStopped, ReadLimits
from veriscribe.errors import InputError
from veriscribe.options import AbstractOptions
from veriscribe.redaction import redact
from veriscribe.results import BatchLine, FailedLine, Usage
from veriscribe.service.common import failed_result
from veriscribe.store import runs
from veriscribe.store.articles import put_articles
from veriscribe.store.db import Store
from veriscribe.store.runs import NewItem

log = logging.getLogger(__name__)
T = TypeVar("T")

REGISTER_CHUNK = 32
"""Articles stored per transaction. A new run reads beside its articles in flight,
and each chunk holds the event loop and the database while it is stored: a small one
keeps that short (a chunk of 200 held both for about 0.15 s)."""
READ_CHUNK = 100  # articles read per thread hop while registering

OnFlush = Callable[[Sequence[NewItem], bool], Awaitable[None]]
"""Called with each chunk's items once they are stored, and whether more may follow."""


def failure_line(
    *,
    run_id: str,
    source: str,
    article_id: str | None,
    reason: str,
    model: str,
    options: AbstractOptions,
    article: Article | None = None,
    usage: Usage | None = None,
    seconds: float = 0.0,
    attempts: int = 0,
) -> FailedLine:
    """Return the output line of an item that failed: ``error`` instead of ``abstract``."""
    return failed_result(
        FailedLine,
        source=source,
        article_id=article_id or source,
        reason=reason,
        model=model,
        prompt=options.prompt,
        split=options.split,
        article=article,
        usage=usage,
        seconds=seconds,
        attempts=attempts,
        run_id=run_id,
    )


def line_json(line: BatchLine | FailedLine) -> str:
    """Return an output line as the one line of JSON the file and the database hold."""
    return json.dumps(
        line.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")
    )


async def register_inputs(
    store: Store,
    run_id: str,
    inputs: Sequence[str],
    *,
    model: str,
    options: AbstractOptions,
    max_input_bytes: int | None,
    should_stop: Callable[[], bool],
    first_chunk: int = REGISTER_CHUNK,
    on_flush: OnFlush | None = None,
) -> bool:
    """Read every input and register its items; unreadable ones as failed items.

    Items are stored a chunk at a time: the first once ``first_chunk`` are read, the
    others every ``REGISTER_CHUNK``; ``on_flush`` hears of each chunk once it is stored.

    Returns:
        Whether every input was read (False: a stop request cut reading short).
    """
    registration = _Registration(
        store,
        run_id,
        model,
        options,
        chunk=first_chunk,
        on_flush=on_flush,
        limits=ReadLimits.from_settings(),
    )
    # Reading runs in threads: a slow walk or parse never keeps the event loop
    # from running the Ctrl-C handler, and a stop request ends registration, even
    # in the middle of a file.
    token = READ_STOP.set(should_stop)
    try:
        await _register_each(registration, inputs, max_input_bytes, should_stop)
    finally:
        READ_STOP.reset(token)
    registered_all = not should_stop()
    await registration.flush(last=True)
    return registered_all


async def _register_each(
    registration: _Registration,
    inputs: Sequence[str],
    max_input_bytes: int | None,
    should_stop: Callable[[], bool],
) -> None:
    """Read every input's files and register their items, until asked to stop."""
    failed = registration.failed
    for text in inputs:
        try:
            found = await asyncio.to_thread(expand_input, text, should_stop=should_stop)
        except WalkStopped:
            break
        except InputError as exc:
            failed(text, None, exc.user_message)
            continue
        for link, reason in found.skipped:
            failed(str(link), None, reason)
        for path in found.files:
            if should_stop():
                break
            await registration.read_file(path, max_input_bytes, should_stop)
        if should_stop():
            break


@dataclass
class _Registration:
    """The items read from a run's inputs, stored a chunk at a time."""

    store: Store
    run_id: str
    model: str
    options: AbstractOptions
    chunk: int = REGISTER_CHUNK  # items read before the next flush
    on_flush: OnFlush | None = None
    limits: ReadLimits | None = None  # of reading one file (None: the settings')
    seq: int = 0
    seen: set[str] = field(default_factory=set)
    items: list[NewItem] = field(default_factory=list)
    articles: list[tuple[int, Article]] = field(default_factory=list)

    async def flush(self, *, last: bool = False) -> None:
        """Store the articles read so far and register their items."""
        if not self.items and not self.articles:
            return
        keys = await put_articles(self.store, [a for _, a in self.articles])
        for (number, article), key in zip(self.articles, keys, strict=True):
            weight = sum(len(p.text) for p in article.paragraphs)
            self.items.append(
                NewItem(
                    article.source,
                    number,
                    article.source,
                    article.id,
                    key,
                    weight=weight,
                )
            )
        await runs.put_items(self.store, self.run_id, self.items)
        stored = self.items
        self.articles.clear()
        self.items = []
        self.chunk = REGISTER_CHUNK
        if self.on_flush is not None:
            await self.on_flush(stored, not last)

    def failed(self, source: str, article_id: str | None, reason: str) -> None:
        """Add a failed item with its reason (once per source)."""
        if source in self.seen:
            return
        self.seen.add(source)
        line = failure_line(
            run_id=self.run_id,
            source=source,
            article_id=article_id,
            reason=reason,
            model=self.model,
            options=self.options,
        )
        self.items.append(
            NewItem(
                source,
                self.seq,
                source,
                article_id,
                None,
                status="failed",
                reason=reason,
                result=line_json(line),
            )
        )
        self.seq += 1

    async def read_file(
        self, path: Path, max_bytes: int | None, should_stop: Callable[[], bool]
    ) -> None:
        """Read one file's articles; an unreadable file becomes a failed item."""
        reader = _articles_of(path, max_bytes, self.limits)
        while True:
            try:
                # No more than the chunk still wants: the first one is stored, and
                # worked on, sooner.
                due = self.chunk - len(self.items) - len(self.articles)
                asked = max(1, min(READ_CHUNK, due))
                chunk = await asyncio.to_thread(_take, reader, asked)
            except ReadingStopped:
                break  # not a failure: the file is read again when the run resumes
            except InputError as exc:
                self.failed(str(path), None, exc.user_message)
                break
            except Exception as exc:  # one unreadable input never stops a batch
                log.exception("cannot read %s", path)
                self.failed(str(path), None, f"cannot read the file: {_describe(exc)}")
                break
            for item in chunk:
                if isinstance(item, ReadFailure):
                    self.failed(item.source, item.id, item.reason)
                elif not item.paragraphs:
                    self.failed(item.source, item.id, "no body paragraph")
                elif item.source not in self.seen:
                    self.seen.add(item.source)
                    self.articles.append((self.seq, item))
                    self.seq += 1
            if len(self.items) + len(self.articles) >= self.chunk:
                await self.flush()
            if len(chunk) < asked or should_stop():
                break


def _articles_of(
    path: Path, max_bytes: int | None, limits: ReadLimits | None = None
) -> Iterator[Article | ReadFailure]:
    """Yield a file's articles; whatever goes wrong, only once iteration starts."""
    yield from read_articles(path, max_bytes=max_bytes, limits=limits)


def _take(items: Iterator[T], n: int) -> list[T]:
    """Return the next ``n`` items (fewer at the end)."""
    return list(itertools.islice(items, n))


def _describe(exc: BaseException) -> str:
    """Return an unexpected error in one line: its kind, and its message if short."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    message = redact(str(exc)).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message[:200]}" if message else type(exc).__name__
