"""Registering a run's items: reading the inputs, and the lines of items that failed."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from veriscribe.documents.articles import (
    Article,
    ReadFailure,
    WalkStopped,
    expand_input,
    read_articles,
)
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

REGISTER_CHUNK = 200
READ_CHUNK = 100  # articles read per thread hop while registering


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
) -> bool:
    """Read every input and register its items; unreadable ones as failed items.

    Returns:
        Whether every input was read (False: a stop request cut reading short).
    """
    seq = 0
    seen: set[str] = set()
    items: list[NewItem] = []
    articles: list[tuple[int, Article]] = []

    async def flush() -> None:
        keys = await put_articles(store, [a for _, a in articles])
        for (number, article), key in zip(articles, keys, strict=True):
            weight = sum(len(p.text) for p in article.paragraphs)
            items.append(
                NewItem(
                    article.source,
                    number,
                    article.source,
                    article.id,
                    key,
                    weight=weight,
                )
            )
        await runs.put_items(store, run_id, items)
        articles.clear()
        items.clear()

    def failed(source: str, article_id: str | None, reason: str) -> None:
        nonlocal seq
        if source in seen:
            return
        seen.add(source)
        line = failure_line(
            run_id=run_id,
            source=source,
            article_id=article_id,
            reason=reason,
            model=model,
            options=options,
        )
        items.append(
            NewItem(
                source,
                seq,
                source,
                article_id,
                None,
                status="failed",
                reason=reason,
                result=line_json(line),
            )
        )
        seq += 1

    # Reading runs in threads: a slow walk or parse never keeps the event loop
    # from running the Ctrl-C handler, and a stop request ends registration.
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
            reader = _articles_of(path, max_input_bytes)
            while True:
                try:
                    chunk = await asyncio.to_thread(_take, reader, READ_CHUNK)
                except InputError as exc:
                    failed(str(path), None, exc.user_message)
                    break
                except Exception as exc:  # one unreadable input never stops a batch
                    log.exception("cannot read %s", path)
                    failed(str(path), None, f"cannot read the file: {_describe(exc)}")
                    break
                for item in chunk:
                    if isinstance(item, ReadFailure):
                        failed(item.source, item.id, item.reason)
                    elif not item.paragraphs:
                        failed(item.source, item.id, "no body paragraph")
                    elif item.source not in seen:
                        seen.add(item.source)
                        articles.append((seq, item))
                        seq += 1
                if len(items) + len(articles) >= REGISTER_CHUNK:
                    await flush()
                if len(chunk) < READ_CHUNK or should_stop():
                    break
        if should_stop():
            break
    registered_all = not should_stop()
    await flush()
    return registered_all


def _articles_of(path: Path, max_bytes: int | None) -> Iterator[Article | ReadFailure]:
    """Yield a file's articles; whatever goes wrong, only once iteration starts."""
    yield from read_articles(path, max_bytes=max_bytes)


def _take(items: Iterator[T], n: int) -> list[T]:
    """Return the next ``n`` items (fewer at the end)."""
    return list(itertools.islice(items, n))


def _describe(exc: BaseException) -> str:
    """Return an unexpected error in one line: its kind, and its message if short."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    message = redact(str(exc)).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message[:200]}" if message else type(exc).__name__
