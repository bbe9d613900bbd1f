"""Helpers shared by the service modules."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from veriscribe.documents.articles import Article
from veriscribe.llm.client import Usage
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


def failed_result(
    *,
    source: str,
    article_id: str,
    reason: str,
    model: str,
    prompt: str,
    split: str | None,
    article: Article | None = None,
    usage: dict[str, int] | None = None,
    seconds: float = 0.0,
) -> dict[str, Any]:
    """Return the result line of an article that failed: ``error`` instead of ``abstract``.

    Batches and baselines write the same fields, then add their own.
    """
    return {
        "id": article_id,
        "source": source,
        "title": article.title if article else "",
        "error": reason,
        "reference": article.reference if article else None,
        "facets": [],
        "fallbacks": [],
        "model": model,
        "prompt": prompt,
        "split": split,
        "usage": usage or Usage().as_dict(),
        "seconds": round(seconds, 3),
    }
