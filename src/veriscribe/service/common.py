"""Helpers shared by the service modules."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from veriscribe.documents.articles import Article
from veriscribe.redaction import redact
from veriscribe.results import FailedResult, Usage
from veriscribe.settings import Settings
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store


@asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[Store]:
    """Open the configured database for the duration of a block."""
    store = await open_database(settings.db)
    try:
        yield store
    finally:
        await store.close()


F = TypeVar("F", bound=FailedResult)


def failed_result(
    line: type[F],
    *,
    source: str,
    article_id: str,
    reason: str,
    model: str,
    prompt: str,
    split: str | None,
    article: Article | None = None,
    usage: Usage | None = None,
    seconds: float = 0.0,
    **extra: Any,
) -> F:
    """Return the result line of an article that failed: ``error`` instead of ``abstract``.

    Batches and baselines write the same fields (``line`` adds its own, from ``extra``).
    """
    return line(
        id=article_id,
        source=source,
        title=article.title if article else "",
        error=redact(reason),
        reference=article.reference if article else None,
        facets=[],
        fallbacks=[],
        model=model,
        prompt=prompt,
        split=split,
        usage=usage or Usage(),
        seconds=round(seconds, 3),
        **extra,
    )
