"""Open the database a setting names: a SQLite file or a PostgreSQL server."""

from __future__ import annotations

from pathlib import Path

from veriscribe.store.db import Store, is_dsn, sqlite_path


async def open_database(target: str | Path) -> Store:
    """Open (creating and migrating if needed) the database a setting names."""
    store: Store
    if is_dsn(target):
        # psycopg is imported only when a PostgreSQL server is named.
        from veriscribe.store.postgres import PostgresStore

        store = await PostgresStore.connect(str(target))
    else:
        from veriscribe.store.sqlite import SqliteStore

        store = await SqliteStore.connect(sqlite_path(target))
    try:
        await store.migrate()
    except BaseException:
        await store.close()
        raise
    return store
