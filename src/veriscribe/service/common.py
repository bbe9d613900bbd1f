"""Helpers shared by the service modules."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from veriscribe.settings import Settings
from veriscribe.store.db import Store


@asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[Store]:
    """Open the configured database for the duration of a block."""
    store = await Store.open(settings.db)
    try:
        yield store
    finally:
        await store.close()
